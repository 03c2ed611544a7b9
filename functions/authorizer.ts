/**
 * API Gateway (HTTP API) REQUEST Lambda authorizer, simple response format.
 * It authenticates (validates X-Auth-Token with Keystone, or noauth2) and
 * passes the outcome to the Placement handlers in the authorizer context;
 * the handlers' authenticate middleware reads it instead of authenticating
 * again, and the policy check stays in the handlers.
 *
 * It always answers isAuthorized: true. API Gateway can only refuse with its
 * own 403 {"message":"Forbidden"}, while clients expect upstream's 401 (bad
 * token) and 503 (Keystone down); the handlers answer those from the context.
 * The stack lets API Gateway cache its answers per X-Auth-Token (60 s by
 * default): a request without a token then gets API Gateway's own 401, and an
 * "unavailable" outcome is cached for that long. With the cache off
 * (`authorizerCacheTtlSeconds=0`) every request reaches this function, which
 * caches valid tokens itself (README, `authorizerCacheTtlSeconds`).
 */
import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import {
  authenticateHeaders,
  checkAuthConfiguration,
  readKeystoneSecretWith,
  toAuthorizerContext,
  type AuthorizerContext,
} from '../shared/auth/authenticate.js';
import { secretCredentials } from '../shared/auth/secret-credentials.js';

// The one function granted read on the Keystone credentials secret (infra/placement-stack.ts).
readKeystoneSecretWith(secretCredentials);
// A broken configuration fails the cold start rather than any request.
checkAuthConfiguration();

export const handler = async (event: APIGatewayRequestAuthorizerEventV2): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> => {
  const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  const outcome = await authenticateHeaders((name) => headers[name]);
  return { isAuthorized: true, context: toAuthorizerContext(outcome) };
};
