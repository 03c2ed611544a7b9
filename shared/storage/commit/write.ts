/** A write of a change, as one action of a TransactWriteItems. */
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';

export type WriteAction = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export interface Write {
  item: WriteAction;
  /** The error a failed condition on this write means; default ConcurrentUpdate. */
  onConditionFailed?: () => Error;
}
