/**
 * The function-URL front door (`-c frontDoor=functionUrl`): one Lambda
 * function behind a function URL serves the whole API. It picks the handler
 * family from the route table as the local adapter does and calls that
 * family's handler, the same middleware chain as behind API Gateway.
 *
 * A function URL has no authorizer, so each handler authenticates the caller
 * itself (the authenticate middleware validates X-Auth-Token with Keystone,
 * with its token cache, shared by every instance through the table) and
 * checks the policy as always. Unknown paths and
 * methods reach the root handler's 404/405. A function URL event is an HTTP
 * API payload 2.0 event with its own requestContext; the handlers read only
 * what both have (method, raw path and query, headers, body).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { readKeystoneSecretWith, shareKeystoneValidationsWith } from '../shared/auth/authenticate.js';
import { secretCredentials } from '../shared/auth/secret-credentials.js';
import { getTokenValidation, putTokenValidation } from '../shared/storage/token-validations.js';
import { handlerFor } from '../shared/http/route-matcher.js';
import { handlers } from './index.js';

// The handlers log in to Keystone themselves here, so this function reads the credentials secret (infra/constructs/function-url.ts grants it).
readKeystoneSecretWith(secretCredentials);
// Every instance validates tokens: through the table, Keystone is asked once per token and cache period, not per instance as well.
shareKeystoneValidationsWith({ get: getTokenValidation, put: putTokenValidation });

export const handler = async (event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> => {
  // Only API Gateway puts an authorizer's identity in the context; whatever claims to be one here is dropped, so the handler authenticates.
  const { authorizer: _none, ...requestContext } = event.requestContext as APIGatewayProxyEventV2['requestContext'] & { authorizer?: unknown };
  return handlers[handlerFor(event.requestContext.http.method, event.rawPath)]({ ...event, requestContext }, context);
};
