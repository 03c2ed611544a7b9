/**
 * The function-URL front door (`-c frontDoor=functionUrl`): one Lambda
 * function behind a function URL serves the whole API. It picks the handler
 * family from the route table as the local adapter does and calls that
 * family's handler, the same middleware chain as behind API Gateway.
 *
 * A function URL has no authorizer, so each handler authenticates the caller
 * itself (the authenticate middleware validates X-Auth-Token with Keystone,
 * with its token cache) and checks the policy as always. Unknown paths and
 * methods reach the root handler's 404/405. A function URL event is an HTTP
 * API payload 2.0 event with its own requestContext; the handlers read only
 * what both have (method, raw path and query, headers, body).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { readKeystoneSecretWith } from '../shared/auth/authenticate.js';
import { secretCredentials } from '../shared/auth/secret-credentials.js';
import { handlerFor } from '../shared/http/route-matcher.js';
import { handlers } from './index.js';

// The handlers log in to Keystone themselves here, so this function reads the credentials secret (infra/constructs/function-url.ts grants it).
readKeystoneSecretWith(secretCredentials);

export const handler = async (event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> => {
  // Only API Gateway puts an authorizer's identity in the context; whatever claims to be one here is dropped, so the handler authenticates.
  const { authorizer: _none, ...requestContext } = event.requestContext as APIGatewayProxyEventV2['requestContext'] & { authorizer?: unknown };
  return handlers[handlerFor(event.requestContext.http.method, event.rawPath)]({ ...event, requestContext }, context);
};
