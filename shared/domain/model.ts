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

/**
 * What a record keyed by resource class (or uuid) holds under a name a
 * client gave, or undefined. Only own entries count: "constructor" or
 * "__proto__" is a name like any unknown one, not a property every object
 * inherits.
 */
export function entryOf<T>(record: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

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

/** One consumer's change: its state before (undefined: new) and after (undefined: gone). */
export interface ConsumerChange {
  before: Consumer | undefined;
  after: Consumer | undefined;
}

/** How a claim changes one provider's usage, and the generation it was read at. */
export interface ProviderUsageChange {
  provider: Provider;
  deltas: Resources;
  /**
   * Whether the provider gets a new generation (default true), conditioned
   * on the one it was read at. False only for usage that merely drops
   * (upstream's allocation delete, or a consumer moving to another provider):
   * the usage then moves atomically with no generation condition, and
   * putProvider's usages condition keeps whole-item writers from undoing it.
   */
  bumpGeneration?: boolean;
}
