/** The microversions a region copy reads and writes at. */

/** From 1.12 GET /allocations/{consumer} names the consumer's project and user: a region cannot be copied from an older API. */
export const OLDEST_READABLE = '1.12';
/** Targets are written at 1.39: consumer types (1.38), consumer generations (1.28), PUT /allocations with project and user. */
export const WRITE_VERSION = '1.39';
/** Consumers without a type are written at 1.37, the last version whose claims carry no consumer_type. */
export const UNTYPED_WRITE_VERSION = '1.37';
