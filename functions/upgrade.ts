/**
 * The upgrade routes, this service's own (upstream has none; its operators
 * run `placement-status upgrade check`): the release the answering function
 * runs, the table's storage format, the build of its entries and the
 * changes in flight; the operator's finalize; and the verify of the entries
 * against the providers (docs/operators/upgrade.md). placement-admin's
 * `upgrade check`, `upgrade finalize` and `upgrade verify` call them.
 */
import { badRequest, conflict } from '../shared/api/errors.js';
import { config } from '../shared/config.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import { validateQuery } from '../shared/http/validation.js';
import { FINALIZE_UPGRADE, VERIFY_ENTRIES_QUERY } from '../shared/schemas/upgrade.js';
import { verifyEntries, type VerifyCursor } from '../shared/storage/entries/verify.js';
import { finalizeNewestFormat, storageStatus, type StorageStatus } from '../shared/storage/upgrade.js';

const statusBody = (status: StorageStatus) => ({
  release: config.release,
  storage_format: {
    table: status.table.format,
    finalized_at: status.table.finalizedAt ?? null,
    finalized_by: status.table.finalizedBy ?? null,
    known: status.known,
    newest: status.newest,
  },
  entries: {
    state: status.entries.state,
    waiting_seconds: status.entries.waitingSeconds ?? null,
    waiting_for: status.entries.waitingFor ?? null,
    shards: status.entries.shards,
    shards_done: status.entries.shardsDone,
    providers: status.entries.providers,
    entries: status.entries.entries,
    write_units: status.entries.writeUnits,
  },
  changes_in_flight: status.changesInFlight,
});

async function check(): Promise<Reply> {
  return { status: 200, body: statusBody(await storageStatus()), lastModified: null };
}

/** 200 once the table is at the format and its entries are built; 202 while their build goes on (call again). */
async function finalize(request: PlacementRequest): Promise<Reply> {
  const { format } = request.json<{ format: number }>(FINALIZE_UPGRADE);
  const before = await storageStatus();
  if (format !== before.newest)
    throw conflict(`Release ${config.release} finalizes to storage format ${before.newest}, not ${format}: run the finalize of the release that writes it.`);
  const done = before.table.format === format && before.entries.state === 'built';
  if (!done && !(await finalizeNewestFormat())) {
    const now = await storageStatus();
    throw conflict(`The table is at storage format ${now.table.format}, which release ${config.release} cannot finalize to ${format}.`);
  }
  const after = await storageStatus();
  return { status: after.entries.state === 'built' ? 200 : 202, body: statusBody(after), lastModified: null };
}

const encodeMarker = (cursor: VerifyCursor): string => Buffer.from(JSON.stringify(cursor)).toString('base64url');

/** A marker this route gave, back as the cursor it encodes; 400 for anything else. */
function decodeMarker(marker: string): VerifyCursor {
  const invalid = () => badRequest(`Invalid marker: ${marker.slice(0, 100)} is not one this route gave`);
  let cursor: unknown;
  try {
    cursor = JSON.parse(Buffer.from(marker, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const { phase, shard, name, after } = (typeof cursor === 'object' && cursor !== null ? cursor : {}) as Record<string, unknown>;
  const wholeShard = typeof shard === 'number' && Number.isInteger(shard) && shard >= 0 && shard < 64;
  const aName = typeof name === 'string' && name.length > 0 && name.length <= 255;
  const aKey = after === undefined || (typeof after === 'object' && after !== null && Object.values(after).every((part) => typeof part === 'string'));
  if (!aKey) throw invalid();
  if (phase === 'providers' && wholeShard) return { phase, shard, after: after as VerifyCursor['after'] };
  if (phase === 'capacity' && wholeShard && aName) return { phase, shard, name, after: after as VerifyCursor['after'] };
  if (phase === 'traits' && aName) return { phase, name, after: after as VerifyCursor['after'] };
  throw invalid();
}

/** One part of the verify of the entries: what it read, the disagreements it found, and the marker to go on with (null at the end). */
async function verify(request: PlacementRequest): Promise<Reply> {
  validateQuery(VERIFY_ENTRIES_QUERY, request.query.toRecord());
  const status = await storageStatus();
  if (status.table.format < 3 || status.entries.state !== 'built')
    throw conflict('The entries are verified once the table is finalized to storage format 3 and their build is done (placement-admin upgrade finalize).');
  const marker = request.query.get('marker');
  const page = await verifyEntries(marker === undefined ? undefined : decodeMarker(marker));
  return {
    status: 200,
    body: {
      providers: page.providers,
      entries: page.entries,
      pending: page.pending,
      disagreements: page.disagreements,
      next: page.next === undefined ? null : encodeMarker(page.next),
    },
    lastModified: null,
  };
}

export const operations: Operations<'upgrade'> = {
  'GET /upgrade': check,
  'POST /upgrade/finalize': finalize,
  'GET /upgrade/entries': verify,
};

export const handler = lambdaHandler(operations);
