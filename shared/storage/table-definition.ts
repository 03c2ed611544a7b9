/**
 * The single DynamoDB table: key schema and secondary indexes. The CDK stack
 * and the local server both create the table from this definition.
 */
export const PARTITION_KEY = 'pk';
export const SORT_KEY = 'sk';

/** Consumers of one project (`PROJECT#id`), by user. */
export const BY_GROUP_INDEX = { name: 'byGroup', partitionKey: 'gpk', sortKey: 'gsk' } as const;

/**
 * Every provider, spread over a fixed number of shards so that writes never
 * make one index partition hot; the sort key keeps a tree's providers
 * together, which the candidate search walks.
 */
export const BY_SHARD_INDEX = { name: 'byShard', partitionKey: 'spk', sortKey: 'ssk' } as const;
export const PROVIDER_SHARDS = 8;

export const SECONDARY_INDEXES = [BY_GROUP_INDEX, BY_SHARD_INDEX] as const;

/** Attribute holding the expiry time of items that may lapse (none yet). */
export const TTL_ATTRIBUTE = 'expiresAt';

/**
 * The table's change stream: each change with the item before and after it,
 * which the allocation history reads (docs/operators/history.md).
 */
export const CHANGE_STREAM_VIEW = 'NEW_AND_OLD_IMAGES' as const;
