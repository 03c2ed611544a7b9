import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../../shared/api/errors.js';
import { toAuthorizerContext } from '../../../../shared/auth/authenticate.js';
import { authenticate } from '../../../../shared/http/middleware/authenticate.js';
import { lambdaRequest, thrownBy, type EventShape } from '../../../support/lambda-request.js';

// The default strategy, noauth2: the token names the user.
async function authenticated(shape: EventShape) {
  const request = lambdaRequest(shape);
  const error = await thrownBy(() => authenticate().before!(request));
  return { identity: request.context.placement!.identity, error: error as HttpError | undefined };
}

describe('authenticate (noauth2)', () => {
  it('finds the caller in the token', async () => {
    const { identity, error } = await authenticated({ path: '/traits', headers: { 'x-auth-token': 'alice:p1' } });
    expect(error).toBeUndefined();
    expect(identity).toEqual({ userId: 'alice', projectId: 'p1', roles: [], systemScope: undefined, domainId: undefined });
  });

  it("answers noauth2's bare 401 without a token", async () => {
    const { identity, error } = await authenticated({ path: '/traits' });
    expect(identity).toBeUndefined();
    expect(error).toBeInstanceOf(HttpError);
    expect(error!.status).toBe(401);
    expect(error!.bare).toBe(true);
  });

  it('lets anyone read the version document', async () => {
    expect(await authenticated({ path: '/' })).toEqual({ identity: undefined, error: undefined });
  });

  it("takes the authorizer's answer when the request passed it, without asking again", async () => {
    const identity = { userId: 'bob', projectId: 'p2', roles: ['reader'], systemScope: undefined, domainId: undefined };
    const viaAuthorizer = await authenticated({ path: '/traits', authorizer: toAuthorizerContext({ kind: 'valid', identity }) });
    expect(viaAuthorizer).toEqual({ identity, error: undefined });
    // The token would say otherwise: the authorizer's context wins.
    const invalid = await authenticated({ path: '/traits', headers: { 'x-auth-token': 'admin' }, authorizer: toAuthorizerContext({ kind: 'invalid' }) });
    expect(invalid.error?.status).toBe(401);
    const unavailable = await authenticated({ path: '/traits', authorizer: toAuthorizerContext({ kind: 'unavailable', reason: 'Keystone timed out' }) });
    expect(unavailable.error?.status).toBe(503);
    expect(unavailable.error?.message).toBe('The Keystone service is temporarily unavailable.');
  });
});
