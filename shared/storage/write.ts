/** A write of a change, as one action of a TransactWriteItems, and the errors of committing one. */
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';

export type WriteAction = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export interface Write {
  item: WriteAction;
  /** The error a failed condition on this write means; default ConcurrentUpdate. */
  onConditionFailed?: () => Error;
}

/** Another writer changed what this change was conditioned on, or holds it in a change of its own. */
export class ConcurrentUpdate extends Error {
  constructor() {
    super('Another thread concurrently updated the data. Please retry your update');
    this.name = 'ConcurrentUpdate';
  }
}
