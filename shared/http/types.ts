/**
 * The types the handler builder (lambda.ts), the middlewares and the
 * operations share. They live here, apart from lambda.ts, so that the
 * middlewares depend on these types only and lambda.ts alone on the
 * middlewares.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { PlacementRequest } from './request.js';
import type { HandlerName, RouteKeyOf } from './routes.js';

export interface Reply {
  status: number;
  body?: unknown;
  /** The body already serialised: by a handler that had to serialise it anyway (to measure it), or as upstream's Python writes it (floats). */
  json?: string;
  headers?: Record<string, string>;
  /**
   * When the resource last changed (Last-Modified from 1.15). Unset on a 200:
   * now, as upstream does; null: no Last-Modified (upstream has no date for
   * some empty documents, e.g. a provider's empty inventory list).
   */
  lastModified?: Date | null;
}

export type Operation = (request: PlacementRequest) => Promise<Reply>;

/**
 * One family's operations, keyed by route key ("GET /traits"): exactly the
 * family's routes in the route table, so a map that misses or misnames one
 * does not compile.
 */
export type Operations<H extends HandlerName> = { readonly [K in RouteKeyOf<H>]: Operation };

export interface PlacementContext extends Context {
  placement?: PlacementRequest;
}

export type LambdaRequest = middy.Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PlacementContext>;

/** A middleware of the chain, typed with the chain's event, result and context. */
export type PlacementMiddleware = middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PlacementContext>;

export type PlacementHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
