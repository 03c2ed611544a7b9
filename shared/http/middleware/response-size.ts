/**
 * The one place answers are compressed, and kept within what Lambda can
 * return.
 *
 * Every body of COMPRESS_FROM_BYTES or more is sent gzip-compressed to a
 * client that accepts gzip (nova's and the openstack client's
 * python-requests send "Accept-Encoding: gzip, deflate"): the answers' bytes
 * leave AWS at a price per GB, and JSON listings shrink to a quarter or
 * less. Smaller bodies gain little against gzip's own 20 bytes and are sent
 * as they are, whoever asks. Since such a body's encoding depends on the
 * request's Accept-Encoding, its answer says so (`vary: Accept-Encoding`)
 * whether it was compressed or not, for caches in between.
 *
 * A function's answer (status, headers and the body as a JSON string, quotes
 * escaped) may have at most 6 MiB; a larger one fails in Lambda and API
 * Gateway answers 500. Upstream has no limit and no paging, and nothing may
 * be dropped silently, so a listing past the limit even compressed, or past
 * it uncompressed for a client that does not accept gzip, is answered 400
 * with how to get it: accept gzip, or narrow the request.
 *
 * Registered right after the metrics middleware, so it sees the response
 * every other middleware has finished, errors included.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { gzipSync } from 'node:zlib';
import { HttpError } from '../../api/errors.js';
import type { LambdaRequest } from '../types.js';

/** Bodies of this many bytes or more are compressed for a client that accepts gzip. */
export const COMPRESS_FROM_BYTES = 1024;

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
  const size = Buffer.byteLength(body);
  if (response.isBase64Encoded || size < COMPRESS_FROM_BYTES) return response;
  const headers = { ...response.headers, vary: appendVary(response.headers ?? {}, 'Accept-Encoding') };
  if (acceptsGzip(acceptEncoding)) {
    const compressed: APIGatewayProxyStructuredResultV2 = {
      ...response,
      headers: { ...headers, 'content-encoding': 'gzip' },
      body: gzipSync(body).toString('base64'),
      isBase64Encoded: true,
    };
    if (responseBytes(compressed) <= MAX_RESPONSE_BYTES) return compressed;
    throw new HttpError(
      400,
      `The response would have ${size} bytes, too many for one response even compressed (at most ${MAX_RESPONSE_BYTES} bytes, gzip-compressed and base64-encoded). Narrow the request with its filters.`,
    );
  }
  // A body's JSON string takes at most 2 bytes per UTF-16 unit escaped, 3 unescaped: most need no measuring.
  if (body.length * 3 + 16_384 < MAX_RESPONSE_BYTES || responseBytes(response) <= MAX_RESPONSE_BYTES) return { ...response, headers };
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
    // An error's answer is short (validation messages are cut, see validation.ts): compressed as any other, never refused again.
    onError: (request: LambdaRequest) => {
      try {
        fit(request);
      } catch {
        // Left as it is.
      }
    },
  } as middy.MiddlewareObj;
};
