/**
 * The items of a multi-step change (journal.ts; the protocol is
 * docs/design/multi-step-changes.md):
 *
 *   change head    pk CHANGES            sk <change id>
 *   staged write   pk CHANGE#<change id>  sk SHA-256 of the target's key
 *
 * A finished change's head stays as a tombstone (`finished`, lapsing after
 * a day through the table's TTL) so that a fence a dead writer left late is
 * still known to be void; staged writes lapse likewise.
 */
import type { Item, Key } from './fields.js';
import { MalformedItem, numberField, optionalStringField, stringField, TYPE_ATTRIBUTE } from './fields.js';
import { sha256 } from './key-parts.js';
import { TTL_ATTRIBUTE } from '../table-definition.js';

export const CHANGE_TYPE = 'change';
export const STAGED_WRITE_TYPE = 'stagedWrite';
export const CHANGES_PK = 'CHANGES';

export type ChangeState = 'pending' | 'committed' | 'aborted';

export const ChangeAttribute = {
  state: 'state',
  /** Until when (ms since the epoch) the actor that set the state is presumed alive. */
  leaseUntil: 'leaseUntil',
  /** Set once nothing of the change is left in the table but this head and its staged writes. */
  finished: 'finished',
  writes: 'writes',
  createdAt: 'createdAt',
  expiresAt: TTL_ATTRIBUTE,
} as const;

export interface ChangeHead {
  id: string;
  state: ChangeState;
  leaseUntil: number;
  finished: boolean;
  /** When it began (absent on a head a request died before writing whole). */
  createdAt?: string;
}

export const changeKey = (id: string): Key => ({ pk: CHANGES_PK, sk: id });

export const encodeChangeHead = (id: string, leaseUntil: number, writes: number, now: string): Item => ({
  ...changeKey(id),
  [TYPE_ATTRIBUTE]: CHANGE_TYPE,
  [ChangeAttribute.state]: 'pending' satisfies ChangeState,
  [ChangeAttribute.leaseUntil]: leaseUntil,
  [ChangeAttribute.writes]: writes,
  [ChangeAttribute.createdAt]: now,
});

export const decodeChangeHead = (item: Item): ChangeHead => ({
  id: stringField(item, 'sk'),
  state: stringField(item, ChangeAttribute.state) as ChangeState,
  leaseUntil: numberField(item, ChangeAttribute.leaseUntil),
  finished: item[ChangeAttribute.finished] === true,
  createdAt: optionalStringField(item, ChangeAttribute.createdAt),
});

/** One write of a change, kept as the table will receive it once the change is committed. */
export type StagedAction =
  | { kind: 'put'; item: Item }
  | { kind: 'update'; expression: string; names?: Record<string, string>; values?: Record<string, unknown> }
  | { kind: 'delete' }
  /** A condition the change only checked: applying it just lifts the fence. */
  | { kind: 'check' };

export interface StagedWrite {
  target: Key;
  action: StagedAction;
}

const StagedWriteAttribute = { target: 'target', kind: 'kind', item: 'item', expression: 'expression', names: 'names', values: 'values' } as const;

export const stagedPartition = (id: string): string => `CHANGE#${id}`;
export const stagedWriteKey = (id: string, target: Key): Key => ({ pk: stagedPartition(id), sk: sha256(`${target.pk}\n${target.sk}`) });

export function encodeStagedWrite(id: string, staged: StagedWrite, expiresAt: number): Item {
  const A = StagedWriteAttribute;
  const { action } = staged;
  return {
    ...stagedWriteKey(id, staged.target),
    [TYPE_ATTRIBUTE]: STAGED_WRITE_TYPE,
    [A.target]: { pk: staged.target.pk, sk: staged.target.sk },
    [A.kind]: action.kind,
    ...(action.kind === 'put' ? { [A.item]: action.item } : {}),
    ...(action.kind === 'update' ? { [A.expression]: action.expression, [A.names]: action.names, [A.values]: action.values } : {}),
    [ChangeAttribute.expiresAt]: expiresAt,
  };
}

export function decodeStagedWrite(item: Item): StagedWrite {
  const A = StagedWriteAttribute;
  const target = item[A.target] as Key;
  const kind = stringField(item, A.kind);
  if (kind === 'put') return { target, action: { kind, item: item[A.item] as Item } };
  if (kind === 'update') {
    return {
      target,
      action: {
        kind,
        expression: stringField(item, A.expression),
        names: item[A.names] as Record<string, string> | undefined,
        values: item[A.values] as Record<string, unknown> | undefined,
      },
    };
  }
  if (kind === 'delete' || kind === 'check') return { target, action: { kind } };
  throw new MalformedItem(A.kind, 'put, update, delete or check', item);
}
