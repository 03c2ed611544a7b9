/**
 * What storage's failures mean to the service, free of the AWS SDK so that
 * the error middleware (and every bundle it is in) can map them without
 * loading a DynamoDB client. The size bound's error, ItemTooLarge, stays
 * with the bound (items/fields.ts).
 */

/** DynamoDB is throttling, failing or out of reach, and stayed so through the retries (dynamodb.ts): a 503. */
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

/**
 * The table is at a storage format newer than this release knows: it was
 * finalized by a later release, and this one was deployed (rolled back)
 * onto it. A 503 that names both, never a misreading
 * (docs/operators/upgrade.md).
 */
export class StorageFormatTooNew extends Error {
  constructor(tableFormat: number, newestKnown: number, release: string) {
    super(
      `The table is at storage format ${tableFormat}, newer than release ${release} of this service reads (up to format ${newestKnown}): ` +
        'a later release finalized it. Deploy that release or a later one; see the upgrade guide.',
    );
    this.name = 'StorageFormatTooNew';
  }
}
