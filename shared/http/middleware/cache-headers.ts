/** From microversion 1.15, 200 responses must not be cached (the date they last changed is the Reply's lastModified). */
import type { LambdaRequest, PlacementMiddleware } from '../types.js';

export const cacheHeaders = (): PlacementMiddleware => ({
  after: (request: LambdaRequest) => {
    const placement = request.context.placement!;
    const response = request.response;
    if (!response || response.statusCode !== 200 || !placement.isAtLeast('1.15')) return;
    response.headers = { 'cache-control': 'no-cache', ...response.headers };
  },
});
