/** From microversion 1.15, 200 responses must not be cached (the date they last changed is the Reply's lastModified). */
import type middy from '@middy/core';
import type { LambdaRequest } from '../types.js';

export const cacheHeaders = (): middy.MiddlewareObj =>
  ({
    after: (request: LambdaRequest) => {
      const placement = request.context.placement!;
      const response = request.response;
      if (!response || response.statusCode !== 200 || !placement.isAtLeast('1.15')) return;
      response.headers = { 'cache-control': 'no-cache', ...response.headers };
    },
  }) as middy.MiddlewareObj;
