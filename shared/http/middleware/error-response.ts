/**
 * The one place errors become responses: HttpError to Placement's JSON error
 * body (or HTML / plain text when the client does not accept JSON, as
 * upstream's webob does), anything else to a logged 500.
 */
import type middy from '@middy/core';
import { ErrorCode, HttpError } from '../errors.js';
import { ConcurrentUpdate, TooManyWrites } from '../../storage/transaction.js';
import { logger } from '../logger.js';
import type { LambdaRequest } from '../lambda.js';
import { versionHeaders } from './microversion.js';

function render(error: HttpError, requestId: string, accept: string | undefined, withCode: boolean) {
  if (error.status === 401) {
    // Upstream's authentication middleware answers before the JSON error formatter is reached.
    return { type: 'application/json', body: JSON.stringify({ message: error.message, code: '401 Unauthorized', title: 'Unauthorized' }) };
  }
  if (accept && !/application\/json|\*\/\*/.test(accept)) {
    const type = accept.includes('text/html') ? 'text/html' : 'text/plain';
    const text = `${error.status} ${error.title}\n\n${error.detail}`;
    const body = type === 'text/html' ? `<html><head><title>${error.status} ${error.title}</title></head><body><h1>${error.status} ${error.title}</h1>${error.detail}</body></html>` : text;
    return { type, body };
  }
  const entry: Record<string, unknown> = {
    status: error.status,
    title: error.title,
    detail: error.detail,
    request_id: requestId,
    ...(withCode ? { code: error.code } : {}),
    ...error.extra,
  };
  return { type: 'application/json', body: JSON.stringify({ errors: [entry] }) };
}

export const errorResponse = (): middy.MiddlewareObj => ({
  onError: (request: LambdaRequest) => {
    const placement = request.context.placement;
    let error = request.error;
    if (error instanceof ConcurrentUpdate) {
      error = new HttpError(409, error.message, { code: ErrorCode.CONCURRENT_UPDATE });
    } else if (error instanceof TooManyWrites) {
      error = new HttpError(413, error.message);
    } else if (!(error instanceof HttpError)) {
      logger.error('unhandled error', { error: error as Error });
      error = new HttpError(500, 'An unexpected error occurred.');
    }
    const httpError = error as HttpError;
    const versioned = httpError.versioned && placement?.versionKnown === true;
    const { type, body } = render(
      httpError,
      placement?.requestId ?? '',
      placement?.header('accept'),
      versioned && placement.isAtLeast('1.23'),
    );
    request.response = {
      statusCode: httpError.status,
      headers: {
        'content-type': type,
        ...(versioned ? versionHeaders(placement, httpError.status === 405) : {}),
        ...httpError.headers,
      },
      body,
    };
  },
}) as middy.MiddlewareObj;
