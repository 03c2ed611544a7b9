/**
 * A count change: the use counts (catalog-use-count.ts) of the custom
 * resource classes and traits one provider change starts or stops using,
 * moved outside that change's commit because they would not fit one
 * transaction beside it (thousands of custom traits). Every count moves by
 * `delta` in the provider's shard. count-changes.ts writes them in parts of
 * 99, each part with its part mark, so that a part is counted once, however
 * often it is sent and whoever sends it.
 *
 * - delta +1, state `ahead`: written before the counts it raises, which go
 *   ahead of the commit; the commit deletes it on condition that it is still
 *   `ahead`. A change that does not commit turns it `undoing` and lowers the
 *   counts it raised again, as the sweeper does once `due` passed (the
 *   request's time, and a lease, as for entries written ahead).
 * - delta -1, state `committed`: written by the commit, due at once; the
 *   counts it lowers are owed after it, to the sweeper, or to a deletion or
 *   rename of one of its names, which lowers them first (lowerCountsOwed).
 *
 *   pk COUNT_CHANGES   sk <change id>
 *
 * The part marks (the part's number under the change id) expire with the
 * table's TTL a day later: a finished change's marks are never read again.
 *
 *   pk COUNT_PARTS#<change id>   sk PART#<n>
 *
 * A provider's classes and traits are bounded by its item (MAX_ITEM_BYTES),
 * so the names fit here.
 */
import { TTL_ATTRIBUTE } from '../table-definition.js';
import { numberField, stringField, stringListField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';

export const COUNT_CHANGE_TYPE = 'countChange';
export const COUNT_CHANGES_PK = 'COUNT_CHANGES';
const COUNT_PART_TYPE = 'countPart';

export const CountChangeAttribute = {
  changeId: 'changeId',
  shard: 'shard',
  classes: 'classes',
  traits: 'traits',
  delta: 'delta',
  state: 'state',
  /** When (ms since the epoch) the sweeper may take the change over from the request that wrote it. */
  due: 'due',
} as const;
const A = CountChangeAttribute;

export type CountChangeState = 'ahead' | 'undoing' | 'committed';

export interface CountChange {
  changeId: string;
  /** The use-count shard of the provider (shardForProvider). */
  shard: number;
  classes: string[];
  traits: string[];
  delta: 1 | -1;
  state: CountChangeState;
  due: number;
}

export const countChangeKey = (changeId: string): Key => ({ pk: COUNT_CHANGES_PK, sk: changeId });

export const encodeCountChange = (change: CountChange): Item => ({
  ...countChangeKey(change.changeId),
  [TYPE_ATTRIBUTE]: COUNT_CHANGE_TYPE,
  [A.changeId]: change.changeId,
  [A.shard]: change.shard,
  [A.classes]: change.classes,
  [A.traits]: change.traits,
  [A.delta]: change.delta,
  [A.state]: change.state,
  [A.due]: change.due,
});

export function decodeCountChange(item: Item): CountChange {
  const delta = numberField(item, A.delta);
  return {
    changeId: stringField(item, A.changeId),
    shard: numberField(item, A.shard),
    classes: stringListField(item, A.classes),
    traits: stringListField(item, A.traits),
    delta: delta < 0 ? -1 : 1,
    state: stringField(item, A.state) as CountChangeState,
    due: numberField(item, A.due),
  };
}

export const countPartKey = (changeId: string, part: number): Key => ({ pk: `COUNT_PARTS#${changeId}`, sk: `PART#${part}` });

/** A part's mark: the part is counted while (and only while) its mark is there. */
export const encodeCountPart = (changeId: string, part: number, expiresAt: number): Item => ({
  ...countPartKey(changeId, part),
  [TYPE_ATTRIBUTE]: COUNT_PART_TYPE,
  [TTL_ATTRIBUTE]: expiresAt,
});
