/**
 * The route table: the single source of truth for the API surface. The local
 * server dispatches from it and the CDK stack builds one API Gateway route per
 * entry, integrated with the Lambda function named by `handler` (one function
 * per resource family, see functions/).
 */

export type HandlerName =
  | 'root'
  | 'resource-providers'
  | 'inventories'
  | 'aggregates'
  | 'traits'
  | 'resource-classes'
  | 'allocations'
  | 'usages'
  | 'allocation-candidates'
  | 'reshaper'
  | 'upgrade'
  | 'history'
  | 'health';

export type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

export interface Route {
  method: Method;
  /** API Gateway path template: `{name}` is one path segment. */
  path: string;
  handler: HandlerName;
  /** The microversion that introduced the route; below it the route is a 404. */
  since: string;
  /** Policy rule checked before the operation runs; absent for the public version document. */
  policy?: string;
  /** The route takes a JSON body (below microversion `until`, when given). */
  jsonBody?: { until?: string };
  /** The status below `since` (default 404; upstream answers 405 for one route). */
  statusBeforeSince?: 405;
  /** False for a GET upstream answers whatever the Accept header says (the version document; a trait, status only). */
  negotiatesAccept?: false;
  /** False for a route of this service's own, which upstream Placement does not have (docs/compatibility.md). */
  upstream?: false;
}

const JSON_BODY = { jsonBody: {} };

const RP = '/resource_providers/{uuid}';

/** The table as written: its literal types give each family's route keys (RouteKeyOf). */
const ROUTE_TABLE = [
  { method: 'GET', path: '/', handler: 'root', since: '1.0', negotiatesAccept: false },

  { method: 'GET', path: '/resource_providers', handler: 'resource-providers', since: '1.0', policy: 'placement:resource_providers:list' },
  { method: 'POST', path: '/resource_providers', handler: 'resource-providers', since: '1.0', policy: 'placement:resource_providers:create', ...JSON_BODY },
  { method: 'GET', path: RP, handler: 'resource-providers', since: '1.0', policy: 'placement:resource_providers:show' },
  { method: 'PUT', path: RP, handler: 'resource-providers', since: '1.0', policy: 'placement:resource_providers:update', ...JSON_BODY },
  { method: 'DELETE', path: RP, handler: 'resource-providers', since: '1.0', policy: 'placement:resource_providers:delete' },

  { method: 'GET', path: `${RP}/inventories`, handler: 'inventories', since: '1.0', policy: 'placement:resource_providers:inventories:list' },
  { method: 'POST', path: `${RP}/inventories`, handler: 'inventories', since: '1.0', policy: 'placement:resource_providers:inventories:create', ...JSON_BODY },
  { method: 'PUT', path: `${RP}/inventories`, handler: 'inventories', since: '1.0', policy: 'placement:resource_providers:inventories:update', ...JSON_BODY },
  {
    method: 'DELETE',
    path: `${RP}/inventories`,
    handler: 'inventories',
    since: '1.5',
    statusBeforeSince: 405,
    policy: 'placement:resource_providers:inventories:delete',
  },
  { method: 'GET', path: `${RP}/inventories/{resource_class}`, handler: 'inventories', since: '1.0', policy: 'placement:resource_providers:inventories:show' },
  {
    method: 'PUT',
    path: `${RP}/inventories/{resource_class}`,
    handler: 'inventories',
    since: '1.0',
    policy: 'placement:resource_providers:inventories:update',
    ...JSON_BODY,
  },
  {
    method: 'DELETE',
    path: `${RP}/inventories/{resource_class}`,
    handler: 'inventories',
    since: '1.0',
    policy: 'placement:resource_providers:inventories:delete',
  },

  { method: 'GET', path: `${RP}/usages`, handler: 'usages', since: '1.0', policy: 'placement:resource_providers:usages' },
  { method: 'GET', path: '/usages', handler: 'usages', since: '1.9', policy: 'placement:usages' },

  { method: 'GET', path: `${RP}/aggregates`, handler: 'aggregates', since: '1.1', policy: 'placement:resource_providers:aggregates:list' },
  { method: 'PUT', path: `${RP}/aggregates`, handler: 'aggregates', since: '1.1', policy: 'placement:resource_providers:aggregates:update', ...JSON_BODY },

  { method: 'GET', path: '/traits', handler: 'traits', since: '1.6', policy: 'placement:traits:list' },
  { method: 'GET', path: '/traits/{name}', handler: 'traits', since: '1.6', policy: 'placement:traits:show', negotiatesAccept: false },
  { method: 'PUT', path: '/traits/{name}', handler: 'traits', since: '1.6', policy: 'placement:traits:update' },
  { method: 'DELETE', path: '/traits/{name}', handler: 'traits', since: '1.6', policy: 'placement:traits:delete' },
  { method: 'GET', path: `${RP}/traits`, handler: 'traits', since: '1.6', policy: 'placement:resource_providers:traits:list' },
  { method: 'PUT', path: `${RP}/traits`, handler: 'traits', since: '1.6', policy: 'placement:resource_providers:traits:update', ...JSON_BODY },
  { method: 'DELETE', path: `${RP}/traits`, handler: 'traits', since: '1.6', policy: 'placement:resource_providers:traits:delete' },

  { method: 'GET', path: '/resource_classes', handler: 'resource-classes', since: '1.2', policy: 'placement:resource_classes:list' },
  { method: 'POST', path: '/resource_classes', handler: 'resource-classes', since: '1.2', policy: 'placement:resource_classes:create', ...JSON_BODY },
  { method: 'GET', path: '/resource_classes/{name}', handler: 'resource-classes', since: '1.2', policy: 'placement:resource_classes:show' },
  {
    method: 'PUT',
    path: '/resource_classes/{name}',
    handler: 'resource-classes',
    since: '1.2',
    policy: 'placement:resource_classes:update',
    jsonBody: { until: '1.7' },
  },
  { method: 'DELETE', path: '/resource_classes/{name}', handler: 'resource-classes', since: '1.2', policy: 'placement:resource_classes:delete' },

  { method: 'GET', path: `${RP}/allocations`, handler: 'allocations', since: '1.0', policy: 'placement:resource_providers:allocations:list' },
  { method: 'GET', path: '/allocations/{consumer_uuid}', handler: 'allocations', since: '1.0', policy: 'placement:allocations:list' },
  { method: 'PUT', path: '/allocations/{consumer_uuid}', handler: 'allocations', since: '1.0', policy: 'placement:allocations:update', ...JSON_BODY },
  { method: 'DELETE', path: '/allocations/{consumer_uuid}', handler: 'allocations', since: '1.0', policy: 'placement:allocations:delete' },
  { method: 'POST', path: '/allocations', handler: 'allocations', since: '1.13', policy: 'placement:allocations:manage', ...JSON_BODY },

  { method: 'GET', path: '/allocation_candidates', handler: 'allocation-candidates', since: '1.10', policy: 'placement:allocation_candidates:list' },
  // Ours, not upstream's (docs/operators/explain.md): under a prefix of its own, so that no path upstream answers (nor any below one) answers otherwise.
  {
    method: 'GET',
    path: '/explain/allocation_candidates',
    handler: 'allocation-candidates',
    since: '1.10',
    policy: 'placement:allocation_candidates:explain',
    upstream: false,
  },
  { method: 'POST', path: '/reshaper', handler: 'reshaper', since: '1.30', policy: 'placement:reshaper:reshape', ...JSON_BODY },

  // This service's own: upgrades (docs/operators/upgrade.md).
  { method: 'GET', path: '/upgrade', handler: 'upgrade', since: '1.0', policy: 'placement:upgrade:check', upstream: false },
  { method: 'POST', path: '/upgrade/finalize', handler: 'upgrade', since: '1.0', policy: 'placement:upgrade:finalize', upstream: false, ...JSON_BODY },
  { method: 'GET', path: '/upgrade/entries', handler: 'upgrade', since: '1.0', policy: 'placement:upgrade:verify', upstream: false },

  // This service's own: the allocation history (docs/operators/history.md), under a prefix of its own as explain's.
  {
    method: 'GET',
    path: '/history/allocations/{consumer_uuid}',
    handler: 'history',
    since: '1.0',
    policy: 'placement:history:allocations:list',
    upstream: false,
  },
  {
    method: 'GET',
    path: `/history${RP}/allocations`,
    handler: 'history',
    since: '1.0',
    policy: 'placement:history:resource_providers:allocations:list',
    upstream: false,
  },
  { method: 'GET', path: '/history/usages', handler: 'history', since: '1.0', policy: 'placement:history:usages', upstream: false },

  // This service's own: what works in the background, for operators without CloudWatch (docs/operators/observability.md).
  { method: 'GET', path: '/health', handler: 'health', since: '1.0', policy: 'placement:health:show', upstream: false },
] as const satisfies readonly Route[];

export const ROUTES: readonly Route[] = ROUTE_TABLE;

/** Upstream Placement's routes: what the differential tester compares. */
export const UPSTREAM_ROUTES: readonly Route[] = ROUTES.filter((route) => route.upstream !== false);

type RouteKeyOfRoute<R> = R extends { method: infer M extends string; path: infer P extends string } ? `${M} ${P}` : never;

/** "GET /resource_providers/{uuid}": the API Gateway route key, also the key of a handler's operation map. */
export type RouteKey = RouteKeyOfRoute<(typeof ROUTE_TABLE)[number]>;

/** The route keys of one handler family: exactly the keys its `operations` map must have. */
export type RouteKeyOf<H extends HandlerName> = RouteKeyOfRoute<Extract<(typeof ROUTE_TABLE)[number], { handler: H }>>;

export const routeKey = (route: Pick<Route, 'method' | 'path'>): string => `${route.method} ${route.path}`;
