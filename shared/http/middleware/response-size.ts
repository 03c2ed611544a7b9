/**
 * Keeps every response within what Lambda can return. A function's answer
 * (status, headers and the body as a JSON string, quotes escaped) may have
 * at most 6 MiB; a larger one fails in Lambda and API Gateway answers 500.
 * Upstream has no limit and no paging, and nothing may be dropped silently,
 * so a listing past the limit (GET /resource_providers of about 7,000
 * providers, a provider's allocations, GET /usages...) is:
 * - sent gzip-compressed when the client accepts gzip (nova and the
 *   openstack client do, through keystoneauth): JSON listings shrink about
 *   tenfold, so the limit moves past any real region;
 * - otherwise answered 400 with how to get it: accept gzip, or narrow the
 *   request.
 *
 * Registered right after the metrics middleware, so it sees the response
 * every other middleware has finished, errors included.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { gzipSync } from 'node:zlib';
import { HttpError } from '../../api/errors.js';
import type { LambdaRequest } from '../types.js';

/** Most bytes a function's answer may take: Lambda's 6 MiB, less a margin for the runtime's envelope. */
export const MAX_RESPONSE_BYTES = 6_000_000;

/** The bytes a body takes in a function's answer: as a JSON string, quotes and backslashes escaped. */
export const escapedBytes = (body: string): number => Buffer.byteLength(JSON.stringify(body));

/** The bytes Lambda counts for this answer: its JSON, in which the body is an escaped string. */
export const responseBytes = (response: APIGatewayProxyStructuredResultV2): number => Buffer.byteLength(JSON.stringify(response));

/** Whether Accept-Encoding allows gzip (explicitly or by "*", with a non-zero q). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  return (acceptEncoding ?? '').split(',').some((part) => {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((param) => param.trim()).find((param) => param.startsWith('q='));
    return (coding.trim() === 'gzip' || coding.trim() === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });
}

function appendVary(headers: Record<string, string | number | boolean>, value: string): string {
  const vary = headers.vary;
  return vary === undefined || vary === '' ? value : `${vary}, ${value}`;
}

/** The response as it can leave the function, or the error that explains why it cannot. */
export function fitResponse(response: APIGatewayProxyStructuredResultV2, acceptEncoding: string | undefined): APIGatewayProxyStructuredResultV2 {
  const body = response.body ?? '';
  // A body's JSON string takes at most 2 bytes per UTF-16 unit escaped, 3 unescaped: small ones need no measuring.
  if (body.length * 3 + 16_384 < MAX_RESPONSE_BYTES || responseBytes(response) <= MAX_RESPONSE_BYTES) return response;
  const size = Buffer.byteLength(body);
  if (acceptsGzip(acceptEncoding)) {
    const headers = response.headers ?? {};
    const compressed: APIGatewayProxyStructuredResultV2 = {
      ...response,
      headers: { ...headers, 'content-encoding': 'gzip', vary: appendVary(headers, 'Accept-Encoding') },
      body: gzipSync(body).toString('base64'),
      isBase64Encoded: true,
    };
    if (responseBytes(compressed) <= MAX_RESPONSE_BYTES) return compressed;
    throw new HttpError(
      400,
      `The response would have ${size} bytes, too many for one response even compressed (at most ${MAX_RESPONSE_BYTES} bytes, gzip-compressed and base64-encoded). Narrow the request with its filters.`,
    );
  }
  throw new HttpError(
    400,
    `The response would have ${size} bytes, more than one response may carry (${MAX_RESPONSE_BYTES}, its body escaped as a JSON string). Send "Accept-Encoding: gzip" to receive it compressed, or narrow the request with its filters.`,
  );
}

export const responseSize = (): middy.MiddlewareObj => {
  const fit = (request: LambdaRequest) => {
    if (request.response) request.response = fitResponse(request.response, request.context.placement?.header('accept-encoding'));
  };
  return {
    after: fit,
    // An error's answer is short (validation messages are cut, see validation.ts); compressed if need be, never refused again.
    onError: (request: LambdaRequest) => {
      try {
        fit(request);
      } catch {
        // Left as it is.
      }
    },
  } as middy.MiddlewareObj;
};
