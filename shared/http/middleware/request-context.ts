/** Builds the PlacementRequest and stamps every response with its request id. */
import { randomUUID } from 'node:crypto';
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
      request.context.placement = new PlacementRequest(`req-${randomUUID()}`, request.event);
    },
    after: stamp,
    onError: stamp,
  };
};
