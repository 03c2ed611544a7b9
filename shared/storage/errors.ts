/**
 * What storage's failures mean to the service, free of the AWS SDK so that
 * the error middleware (and every bundle it is in) can map them without
 * loading a DynamoDB client. The size bound's error, ItemTooLarge, stays
 * with the bound (items/fields.ts).
 */

/** DynamoDB is throttling, failing or out of reach, and stayed so through the retries (client.ts): a 503. */
export class DependencyUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DependencyUnavailable';
  }
}

/** Another writer changed what this change was conditioned on, or holds it in a change of its own: retried, then a 409. */
export class ConcurrentUpdate extends Error {
  constructor() {
    super('Another thread concurrently updated the data. Please retry your update');
    this.name = 'ConcurrentUpdate';
  }
}
