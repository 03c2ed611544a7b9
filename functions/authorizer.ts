/**
 * API Gateway (HTTP API) REQUEST Lambda authorizer, simple response format.
 * It authenticates (validates X-Auth-Token with Keystone, or noauth2) and
 * passes the outcome to the Placement handlers in the authorizer context;
 * the handlers' authenticate middleware reads it instead of authenticating
 * again, and the policy check stays in the handlers.
 *
 * It answers isAuthorized: true for valid and invalid tokens alike. API
 * Gateway can only refuse with its own 403 {"message":"Forbidden"}, while
 * clients expect upstream's 401; the handlers answer it from the context.
 *
 * API Gateway caches whatever this function returns, per X-Auth-Token, for
 * the stack's TTL (PLACEMENT_AUTHORIZER_CACHE_SECONDS tells it the TTL). A
 * token Keystone called invalid stays invalid, so caching that is harmless;
 * "Keystone could not be asked" must not be cached, or a token would be
 * refused for the whole TTL after Keystone came back. So with the cache on,
 * that outcome is thrown: API Gateway answers an authorizer that fails with
 * its own 500 and, having no answer, caches nothing. With the cache off
 * (`authorizerCacheTtlSeconds=0`) it goes in the context and the handler
 * answers Placement's 503.
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
import { config } from '../shared/config.js';

// The one function granted read on the Keystone credentials secret (infra/placement-stack.ts).
readKeystoneSecretWith(secretCredentials);
// A broken configuration fails the cold start rather than any request.
checkAuthConfiguration();

export const handler = async (event: APIGatewayRequestAuthorizerEventV2): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> => {
  const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  const outcome = await authenticateHeaders((name) => headers[name]);
  if (outcome.kind === 'unavailable' && config.authorizerCacheSeconds > 0) {
    // Lambda logs the error with its message: the reason, never the token.
    throw new Error(`Keystone unavailable: ${outcome.reason}`);
  }
  return { isAuthorized: true, context: toAuthorizerContext(outcome) };
};
