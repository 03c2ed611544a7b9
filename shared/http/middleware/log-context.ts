/**
 * Tags every structured log line a request writes with its request id and
 * microversion. The logger is module-level and outlives the invocation, so
 * the previous request's keys are dropped first.
 */
import { logger } from '../logger.js';
import type { LambdaRequest, PlacementMiddleware } from '../types.js';

export const logContext = (): PlacementMiddleware => ({
  before: (request: LambdaRequest) => {
    const placement = request.context.placement!;
    logger.resetKeys();
    logger.appendKeys({ request_id: placement.requestId, microversion: placement.version.toString() });
  },
});
