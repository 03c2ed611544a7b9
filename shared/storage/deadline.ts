/**
 * When the current invocation runs out of time, for the one step that must
 * act before it does: a multi-step change (journal.ts) gives up before its
 * commit point while it can still say so, so that its 503 means "nothing
 * was written", and once committed answers without waiting for the rest of
 * its writes, which readers and the sweeper finish.
 *
 * lambdaHandler opens a scope with Lambda's own deadline. Outside one
 * (scripts, the sweeper, the tests' direct calls) there is none.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const deadlines = new AsyncLocalStorage<number>();

/** Runs `work` under a deadline (ms since the epoch). */
export function withDeadline<T>(at: number, work: () => T): T {
  return deadlines.run(at, work);
}

/** Milliseconds left before the current scope's deadline; Infinity outside any. */
export function timeLeftMs(): number {
  const at = deadlines.getStore();
  return at === undefined ? Infinity : at - Date.now();
}
