/**
 * Checks upstream makes before a handler runs, in upstream's order: a body
 * needs a content type; the route must exist at the requested microversion;
 * the client must accept JSON; a JSON body must say it is JSON.
 */
import type middy from '@middy/core';
import { HttpError, badRequest, notFound } from '../errors.js';
import type { PlacementRequest } from '../request.js';
import type { LambdaRequest } from '../lambda.js';

function checkContentLength(request: PlacementRequest): void {
  const length = request.header('content-length');
  if (length === undefined || length === '') return;
  if (!/^\s*\d+\s*$/.test(length)) throw badRequest('content-length header must be an integer');
  if (Number(length) > 0 && !request.header('content-type')) {
    throw badRequest('content-type header required when content-length > 0');
  }
}

/** Accept header negotiation for the only type we produce. */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((part) => {
    const [type = '', ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) return false;
    return ['application/json', 'application/*', '*/*'].includes(type.trim().toLowerCase());
  });
}

function mediaType(request: PlacementRequest): string {
  return (request.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

export const requestGuards = (): middy.MiddlewareObj => ({
  before: (request: LambdaRequest) => {
    const placement = request.context.placement!;
    checkContentLength(placement);
    const route = placement.match?.route;
    if (route === undefined) return; // the handler answers 404/405
    if (placement.version.isBefore(route.since)) {
      throw route.statusBeforeSince === 405
        ? new HttpError(405, 'The method specified is not allowed for this resource.', {
            explanation: `The method ${placement.method} is not allowed for this resource.`,
          })
        : notFound('The resource could not be found.');
    }
    // Upstream negotiates only where it answers with a JSON document: the GETs with a body.
    if (route.method === 'GET' && route.respondsWithJson !== false && !acceptsJson(placement.header('accept'))) {
      throw new HttpError(406, 'Only application/json is provided', {
        explanation: 'The resource could not be generated that was acceptable to your browser (content of type application/json.',
      });
    }
    if (route.jsonBody && (route.jsonBody.until === undefined || placement.version.isBefore(route.jsonBody.until))) {
      const type = mediaType(placement);
      if (type !== 'application/json') {
        const shown = type || 'None';
        throw new HttpError(415, `The media type ${shown} is not supported, use application/json`, {
          explanation: `The request media type ${shown} is not supported by this server.`,
        });
      }
    }
  },
}) as middy.MiddlewareObj;
