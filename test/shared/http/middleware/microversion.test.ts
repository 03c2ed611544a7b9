import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../../shared/api/errors.js';
import { microversion } from '../../../../shared/http/middleware/microversion.js';
import { lambdaRequest, thrownBy } from '../../../support/lambda-request.js';

describe('microversion', () => {
  it('reads the requested version and marks it known', async () => {
    const request = lambdaRequest({ headers: { 'OpenStack-API-Version': 'placement 1.20' } });
    await microversion().before!(request);
    expect(request.context.placement!.version.toString()).toBe('1.20');
    expect(request.context.placement!.versionKnown).toBe(true);
  });

  it('takes 1.0 without a header and the newest for "latest"', async () => {
    const without = lambdaRequest();
    await microversion().before!(without);
    expect(without.context.placement!.version.toString()).toBe('1.0');
    const latest = lambdaRequest({ headers: { 'openstack-api-version': 'placement latest' } });
    await microversion().before!(latest);
    expect(latest.context.placement!.version.toString()).toBe('1.39');
  });

  it('refuses a version out of range with 406, the version still unknown', async () => {
    const request = lambdaRequest({ headers: { 'openstack-api-version': 'placement 1.40' } });
    const error = await thrownBy(() => microversion().before!(request));
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(406);
    expect(request.context.placement!.versionKnown).toBe(false);
  });

  it('echoes the version and varies on it', async () => {
    const request = lambdaRequest({ headers: { 'openstack-api-version': 'placement 1.7' } });
    await microversion().before!(request);
    request.response = { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
    await microversion().after!(request);
    expect(request.response.headers).toEqual({ 'content-type': 'application/json', 'openstack-api-version': 'placement 1.7', vary: 'openstack-api-version' });
  });
});
