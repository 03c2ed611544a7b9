/**
 * Matches a method and path against the route table. API Gateway does this in
 * AWS; the local server and the fallback handler (404/405) use it here.
 */
import { HttpError } from '../api/errors.js';
import { ROUTES, type HandlerName, type Route } from './routes.js';

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
}

const compiled: CompiledRoute[] = ROUTES.map((route) => {
  const names: string[] = [];
  const source = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { route, pattern: new RegExp(`^${source}$`), names };
});

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The route for this request, or undefined when the path or the method is unknown. */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  for (const { route, pattern, names } of compiled) {
    if (route.method !== method) continue;
    const match = pattern.exec(path);
    if (!match) continue;
    const params = Object.fromEntries(names.map((name, index) => [name, decodeSegment(match[index + 1]!)]));
    return { route, params };
  }
  return undefined;
}

/**
 * The handler family that answers a request: its route's, or the root
 * handler's, which answers unmatched paths and methods with 404/405 (API
 * Gateway's $default route). The local adapter and the function-URL router
 * dispatch with it.
 */
export function handlerFor(method: string, path: string): HandlerName {
  return matchRoute(method.toUpperCase(), path)?.route.handler ?? 'root';
}

/** The error for a request no route matched: 405 with `allow` when the path exists, else 404. */
export function unmatchedRouteError(method: string, path: string): HttpError {
  const allowed = compiled.filter(({ pattern }) => pattern.test(path)).map(({ route }) => route.method);
  if (allowed.length === 0) return new HttpError(404, '', { vary: false });
  return new HttpError(405, 'The method specified is not allowed for this resource.', {
    headers: { allow: allowed.join(', ') },
    explanation: `The method ${method} is not allowed for this resource.`,
    htmlExplanation: `The method ${method} is not allowed for this resource. `,
  });
}
