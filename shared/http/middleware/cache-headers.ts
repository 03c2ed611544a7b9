/** From microversion 1.15, responses with a body say when they last changed and must not be cached. */
import type middy from '@middy/core';
import type { LambdaRequest } from '../lambda.js';

export const cacheHeaders = (): middy.MiddlewareObj => ({
  after: (request: LambdaRequest) => {
    const placement = request.context.placement!;
    const response = request.response;
    if (!response || response.statusCode !== 200 || !placement.isAtLeast('1.15')) return;
    response.headers = {
      'cache-control': 'no-cache',
      'last-modified': new Date().toUTCString(),
      ...response.headers,
    };
  },
}) as middy.MiddlewareObj;
