import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../../shared/api/errors.js';
import type { Identity } from '../../../../shared/domain/policy.js';
import { authorize } from '../../../../shared/http/middleware/authorize.js';
import { lambdaRequest, thrownBy, type EventShape } from '../../../support/lambda-request.js';

const admin: Identity = { userId: 'admin', projectId: 'admin', roles: ['admin'], systemScope: undefined, domainId: undefined };
const member: Identity = { userId: 'alice', projectId: 'p1', roles: ['member', 'reader'], systemScope: undefined, domainId: undefined };

async function outcome(shape: EventShape, identity: Identity | undefined): Promise<string> {
  const request = lambdaRequest(shape);
  request.context.placement!.identity = identity;
  const error = await thrownBy(() => authorize().before!(request));
  if (error === undefined) return 'allowed';
  expect(error).toBeInstanceOf(HttpError);
  return `${(error as HttpError).status} ${(error as HttpError).message}`;
}

describe('authorize (upstream default policy)', () => {
  it("checks the route's rule against the caller", async () => {
    expect(await outcome({ path: '/resource_providers' }, admin)).toBe('allowed');
    expect(await outcome({ path: '/resource_providers' }, member)).toBe('403 Policy does not allow placement:resource_providers:list to be performed.');
  });

  it('targets the project asked about on GET /usages', async () => {
    expect(await outcome({ path: '/usages', query: 'project_id=p1' }, member)).toBe('allowed');
    expect(await outcome({ path: '/usages', query: 'project_id=p2' }, member)).toBe('403 Policy does not allow placement:usages to be performed.');
  });

  it('has nothing to check on a route without a rule or without a caller', async () => {
    expect(await outcome({ path: '/' }, member)).toBe('allowed');
    expect(await outcome({ path: '/no-such-thing' }, member)).toBe('allowed');
    expect(await outcome({ path: '/resource_providers' }, undefined)).toBe('allowed');
  });
});
