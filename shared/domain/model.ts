/** The shapes the domain works on, independent of HTTP and of DynamoDB. */

export interface Inventory {
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
}

/** Resource class name to inventory. */
export type Inventories = Record<string, Inventory>;

/** Resource class name to amount. */
export type Resources = Record<string, number>;

export interface Provider {
  uuid: string;
  name: string;
  generation: number;
  parentUuid: string | null;
  rootUuid: string;
  inventories: Inventories;
  /** What all consumers together hold, per resource class. */
  usages: Resources;
  traits: string[];
  aggregates: string[];
  /** The providers that name this one as parent (their uuids, sorted). */
  children: string[];
  createdAt: string;
  updatedAt: string;
}

/** What the allocation candidate search reads of a provider: no name, generation or timestamps. */
export const SEARCH_FIELDS = ['uuid', 'parentUuid', 'rootUuid', 'inventories', 'usages', 'traits', 'aggregates', 'children'] as const;
export type SearchProvider = Pick<Provider, (typeof SEARCH_FIELDS)[number]>;

export interface Consumer {
  uuid: string;
  projectId: string;
  userId: string;
  generation: number;
  consumerType: string | undefined;
  /** Provider uuid to the resources held there. */
  allocations: Record<string, Resources>;
  createdAt: string;
  updatedAt: string;
}

/** The consumer type upstream reports for consumers created without one. */
export const UNKNOWN_CONSUMER_TYPE = 'unknown';
