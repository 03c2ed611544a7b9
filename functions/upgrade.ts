/**
 * The upgrade routes, this service's own (upstream has none; its operators
 * run `placement-status upgrade check`): the release the answering function
 * runs, the table's storage format and the changes in flight; and the
 * operator's finalize (docs/operators/upgrade.md). placement-admin's
 * `upgrade check` and `upgrade finalize` call them.
 */
import { conflict } from '../shared/api/errors.js';
import { config } from '../shared/config.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import { FINALIZE_UPGRADE } from '../shared/schemas/upgrade.js';
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
  changes_in_flight: status.changesInFlight,
});

async function check(): Promise<Reply> {
  return { status: 200, body: statusBody(await storageStatus()), lastModified: null };
}

async function finalize(request: PlacementRequest): Promise<Reply> {
  const { format } = request.json<{ format: number }>(FINALIZE_UPGRADE);
  const before = await storageStatus();
  if (format !== before.newest)
    throw conflict(`Release ${config.release} finalizes to storage format ${before.newest}, not ${format}: run the finalize of the release that writes it.`);
  if (before.table.format !== format && !(await finalizeNewestFormat())) {
    const now = await storageStatus();
    throw conflict(`The table is at storage format ${now.table.format}; a finalize to ${format} needs it at ${format - 1}.`);
  }
  return { status: 200, body: statusBody(await storageStatus()), lastModified: null };
}

export const operations: Operations<'upgrade'> = {
  'GET /upgrade': check,
  'POST /upgrade/finalize': finalize,
};

export const handler = lambdaHandler(operations);
