/**
 * The one place errors become responses: HttpError to Placement's JSON error
 * body (or HTML / plain text when the client does not accept JSON, as
 * upstream's webob does); storage's errors to their statuses (409 concurrent
 * update, 400 for a record that would outgrow its size bound, 503 with
 * Retry-After for an unavailable DynamoDB); anything else to a logged 500.
 */
import { ErrorCode, HttpError, serviceUnavailable } from '../../api/errors.js';
import { dumpPythonJson } from '../../api/python-json.js';
import { ItemTooLarge } from '../../storage/items/fields.js';
import { ConcurrentUpdate, DependencyUnavailable, StorageFormatTooNew } from '../../storage/errors.js';
import { logger } from '../logger.js';
import type { LambdaRequest, PlacementMiddleware } from '../types.js';
import { versionHeaders } from './microversion.js';

/** The type webob picks for its own error pages: JSON unless the client prefers HTML, plain text when it takes neither. */
function bareType(accept: string | undefined): 'json' | 'html' | 'plain' {
  if (accept === undefined || accept.trim() === '') return 'json';
  let best: { type: 'json' | 'html' | 'plain'; q: number; specific: boolean } = { type: 'plain', q: 0, specific: false };
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const q = Number(
      params
        .map((p) => p.trim())
        .find((p) => p.startsWith('q='))
        ?.slice(2) ?? 1,
    );
    const [major, minor] = range.trim().split('/');
    for (const [type, offer] of [
      ['json', 'application/json'],
      ['html', 'text/html'],
    ] as const) {
      const [offerMajor, offerMinor] = offer.split('/');
      const matches = (major === '*' || major === offerMajor) && (minor === '*' || minor === offerMinor);
      const specific = minor !== '*';
      if (matches && q > 0 && (q > best.q || (q === best.q && specific && !best.specific))) best = { type, q, specific };
    }
  }
  return best.type;
}

/**
 * Laid out as upstream lays errors out: webob negotiates JSON, HTML or plain
 * text; Placement's own errors are its JSON error document, errors of the
 * authentication middlewares ("bare") webob's generic JSON, or
 * keystonemiddleware's fixed document whatever the client accepts.
 */
function render(error: HttpError, requestId: string, accept: string | undefined, withCode: boolean) {
  if (typeof error.bare === 'object') return { type: 'application/json', body: dumpPythonJson(error.bare.document) };
  const status = `${error.status} ${error.title}`;
  const explained = `${error.explanationSentence}<br /><br />\n${error.message}\n\n`;
  switch (bareType(accept)) {
    case 'json':
      if (error.bare) {
        return {
          type: 'application/json',
          body: dumpPythonJson({ message: explained, code: status, title: error.title }),
        };
      }
      return {
        type: 'application/json',
        body: dumpPythonJson({
          errors: [
            {
              status: error.status,
              title: error.title,
              detail: error.detail,
              ...(withCode ? { code: error.code } : {}),
              request_id: requestId,
              ...error.extra,
            },
          ],
        }),
      };
    case 'html': {
      const text = error.htmlExplanation === undefined ? explained : `${error.htmlExplanation}<br /><br />\n${error.message}`;
      return {
        type: 'text/html; charset=UTF-8',
        body: `<html>\n <head>\n  <title>${status}</title>\n </head>\n <body>\n  <h1>${status}</h1>\n  ${text}\n </body>\n</html>`,
      };
    }
    case 'plain':
      return { type: 'text/plain; charset=UTF-8', body: `${status}\n\n${error.detail}` };
  }
}

export const errorResponse = (): PlacementMiddleware => ({
  onError: (request: LambdaRequest) => {
    const placement = request.context.placement;
    let error = request.error;
    if (error instanceof ConcurrentUpdate) {
      error = new HttpError(409, error.message, { code: ErrorCode.CONCURRENT_UPDATE });
    } else if (error instanceof ItemTooLarge) {
      error = new HttpError(400, error.message);
    } else if (error instanceof StorageFormatTooNew) {
      logger.error('table at a newer storage format', { error });
      error = new HttpError(503, error.message);
    } else if (error instanceof DependencyUnavailable) {
      logger.warn('DynamoDB unavailable', { error });
      error = serviceUnavailable('The service could not reach its database in time. Please retry.');
    } else if (!(error instanceof HttpError)) {
      logger.error('unhandled error', { error: error as Error });
      error = new HttpError(500, 'An unexpected error occurred.');
    }
    const httpError = error as HttpError;
    const versioned = httpError.versioned && placement?.versionKnown === true;
    const { type, body } = render(httpError, placement?.requestId ?? '', placement?.header('accept'), versioned && placement.isAtLeast('1.23'));
    request.response = {
      statusCode: httpError.status,
      headers: {
        'content-type': type,
        ...(versioned ? versionHeaders(placement, httpError.vary) : {}),
        ...httpError.headers,
      },
      body,
    };
  },
});
