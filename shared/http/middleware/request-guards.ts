/**
 * Checks upstream makes before a handler runs, in upstream's order: a body
 * needs a content type; the route must exist at the requested microversion;
 * the client must accept JSON; a JSON body must say it is JSON.
 */
import { HttpError, notFound } from '../../api/errors.js';
import type { PlacementRequest } from '../request.js';
import type { LambdaRequest, PlacementMiddleware } from '../types.js';

/** Upstream checks the length outside its handlers, so these 400s carry no Vary header. */
function checkContentLength(request: PlacementRequest): void {
  const length = request.header('content-length');
  if (length === undefined || length === '') return;
  // What Python's int() accepts: sign, surrounding spaces, digit-separating underscores.
  if (!/^\s*[+-]?\d+(_\d+)*\s*$/.test(length)) throw new HttpError(400, 'content-length header must be an integer', { vary: false });
  if (Number(length.replaceAll('_', '')) > 0 && !request.header('content-type')) {
    throw new HttpError(400, 'content-type header required when content-length > 0', { vary: false });
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
  // Compared as sent: upstream refuses `application/JSON` too.
  return (request.header('content-type') ?? '').split(';')[0]!.trim();
}

export const requestGuards = (): PlacementMiddleware => ({
  before: (request: LambdaRequest) => {
    const placement = request.context.placement!;
    checkContentLength(placement);
    const route = placement.match?.route;
    if (route === undefined) return; // the handler answers 404/405
    if (placement.version.isBefore(route.since)) {
      // Upstream raises these with no message of their own: the detail is the explanation alone.
      throw route.statusBeforeSince === 405
        ? new HttpError(405, '', {
            explanation: `The method ${placement.method} is not allowed for this resource.`,
            htmlExplanation: `The method ${placement.method} is not allowed for this resource. `,
          })
        : notFound('');
    }
    // Upstream negotiates only in the handlers of its GETs with a JSON document.
    if (route.method === 'GET' && route.negotiatesAccept !== false && !acceptsJson(placement.header('accept'))) {
      const accept = placement.header('accept');
      throw new HttpError(406, 'Only application/json is provided', {
        explanation: `The resource could not be generated that was acceptable to your browser (content of type ${accept}.`,
        htmlExplanation: `The resource could not be generated that was acceptable to your browser\n(content of type ${accept}. `,
      });
    }
    if (route.jsonBody && (route.jsonBody.until === undefined || placement.version.isBefore(route.jsonBody.until))) {
      const type = mediaType(placement);
      if (type !== 'application/json') {
        const shown = type || 'None';
        throw new HttpError(415, `The media type ${shown} is not supported, use application/json`, {
          explanation: `The request media type ${shown} is not supported by this server.`,
          htmlExplanation: `The request media type ${shown} is not supported by this server.\n`,
        });
      }
    }
  },
});
