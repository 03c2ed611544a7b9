/** Builds the PlacementRequest, stamps every response and log line with its request id. */
import { randomUUID } from 'node:crypto';
import { logger } from '../logger.js';
import { PlacementRequest } from '../request.js';
import type { LambdaRequest, PlacementMiddleware } from '../types.js';

export const requestContext = (): PlacementMiddleware => {
  const stamp = (request: LambdaRequest) => {
    const requestId = request.context.placement?.requestId;
    if (request.response && requestId) {
      request.response.headers = { ...request.response.headers, 'x-openstack-request-id': requestId };
    }
  };
  return {
    before: (request: LambdaRequest) => {
      const requestId = `req-${randomUUID()}`;
      request.context.placement = new PlacementRequest(requestId, request.event);
      logger.appendKeys({ request_id: requestId });
    },
    after: stamp,
    onError: stamp,
  };
};
