/**
 * A claim workload against a Placement API, and the checks of what it left
 * behind: used by `npm run faults` and its integration test.
 *
 * Workers claim, move and release allocations of their own consumers (as
 * nova's conductors and computes do) on a shared set of providers, so that
 * claims race on provider generations and capacity but never on consumers.
 * Each worker remembers what every answer told it: after a 204 the consumer
 * holds the new allocations, after a 4xx the old ones, and after a 5xx
 * either (the outcome is unknown to the client). The check then reads every
 * consumer and provider back and counts what disagrees.
 */
import { randomUUID } from 'node:crypto';
import type { ApiResponse, PlacementClient } from '../../admin/placement-client.js';
import { seededRandom } from './seeded-random.js';

type Resources = Record<string, number>;
type Allocations = Record<string, Resources>;

export interface WorkloadOptions {
  workers: number;
  /** Writes in total (claims, moves, releases). */
  operations: number;
  /** Seed of the workload's choices. */
  seed?: number;
}

export interface WorkloadResult {
  providerUuids: string[];
  consumers: Map<string, ConsumerRecord>;
  /** Writes sent, and how many the service acknowledged (204). */
  attempted: number;
  succeeded: number;
  /** Every answer by status, reads included. */
  statuses: Map<number, number>;
  /** The error codes of the 409 answers. */
  conflictCodes: Map<string, number>;
  /**
   * 409s for the generation of a consumer whose every write had a clear
   * answer: each worker alone writes its consumers and reads the generation
   * before a move, so one means a write that landed was taken for one that
   * did not (a lost answer retried wrongly). After a 5xx, a write may still
   * land later (an attempt held up on the way), so those do not count.
   */
  generationConflicts: number;
  /** 5xx answers, and those of them that were a 503 with Retry-After. */
  serverErrors: number;
  unavailableWithRetryAfter: number;
  /** Answers that never came (connection failure, timeout). */
  transportErrors: number;
}

/** What one consumer may hold: one state, or several after an answer that left the outcome unknown. */
export interface ConsumerRecord {
  possible: Allocations[];
  /** Some write of this consumer had no clear answer. */
  uncertain: boolean;
}

const PROJECT = 'faults-project';
const USER = 'faults-user';

const bump = (map: Map<string | number, number>, key: string | number) => map.set(key, (map.get(key) ?? 0) + 1);

/** Providers with room for every claim of the workload, so that conflicts come from races, not from capacity. */
export async function createProviders(
  api: PlacementClient,
  count: number,
  inventory: Resources = { VCPU: 100_000, MEMORY_MB: 100_000_000 },
): Promise<string[]> {
  const uuids: string[] = [];
  for (let n = 0; n < count; n++) {
    const uuid = randomUUID();
    const created = await api.post('/resource_providers', { name: `faults-${uuid}`, uuid });
    if (created.status !== 200) throw new Error(`creating a provider: ${created.status} ${created.text}`);
    const inventories = Object.fromEntries(Object.entries(inventory).map(([resourceClass, total]) => [resourceClass, { total }]));
    const put = await api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories });
    if (put.status !== 200) throw new Error(`setting an inventory: ${put.status} ${put.text}`);
    uuids.push(uuid);
  }
  return uuids;
}

/** Runs the workload on providers made by createProviders. */
export async function runClaimWorkload(api: PlacementClient, providerUuids: string[], options: WorkloadOptions): Promise<WorkloadResult> {
  const random = seededRandom(options.seed ?? 7).next;
  const result: WorkloadResult = {
    providerUuids,
    consumers: new Map(),
    attempted: 0,
    succeeded: 0,
    statuses: new Map(),
    conflictCodes: new Map(),
    generationConflicts: 0,
    serverErrors: 0,
    unavailableWithRetryAfter: 0,
    transportErrors: 0,
  };
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
  const someAllocations = (): Allocations => {
    const allocations: Allocations = {};
    const count = random() < 0.3 ? 2 : 1;
    while (Object.keys(allocations).length < count) {
      allocations[pick(providerUuids)] = { VCPU: 1 + Math.floor(random() * 4), MEMORY_MB: 512 * (1 + Math.floor(random() * 8)) };
    }
    return allocations;
  };
  const body = (allocations: Allocations, generation: number | null) => ({
    allocations: Object.fromEntries(Object.entries(allocations).map(([uuid, resources]) => [uuid, { resources }])),
    project_id: PROJECT,
    user_id: USER,
    consumer_generation: generation,
  });

  /** Sends one request and books its answer; undefined when none came. */
  async function send(request: () => Promise<ApiResponse>): Promise<ApiResponse | undefined> {
    let response: ApiResponse;
    try {
      response = await request();
    } catch {
      result.transportErrors += 1;
      return undefined;
    }
    bump(result.statuses as Map<string | number, number>, response.status);
    if (response.status >= 500) {
      result.serverErrors += 1;
      if (response.status === 503 && response.headers.get('retry-after') !== null) result.unavailableWithRetryAfter += 1;
    }
    if (response.status === 409) bump(result.conflictCodes as Map<string | number, number>, response.body?.errors?.[0]?.code ?? '(none)');
    return response;
  }

  /** Books a write's outcome for the consumers it meant to change. */
  function settle(response: ApiResponse | undefined, changes: Map<string, Allocations>): void {
    result.attempted += 1;
    if (response?.status === 204) result.succeeded += 1;
    const generationConflict = response?.status === 409 && /consumer generation conflict/.test(response.body?.errors?.[0]?.detail ?? '');
    for (const [uuid, next] of changes) {
      const record = result.consumers.get(uuid) ?? { possible: [{}], uncertain: false };
      if (generationConflict && !record.uncertain) result.generationConflicts += 1;
      if (response?.status === 204) record.possible = [next];
      // No answer or a 5xx: the change may or may not have landed, now or later.
      else if (response === undefined || response.status >= 500) {
        record.possible = [...record.possible, next];
        record.uncertain = true;
      }
      result.consumers.set(uuid, record);
    }
  }

  async function worker(operations: number): Promise<void> {
    const mine: string[] = [];
    for (let n = 0; n < operations; n++) {
      const roll = random();
      if (mine.length === 0 || roll < 0.45) {
        const uuid = randomUUID();
        const allocations = someAllocations();
        mine.push(uuid);
        settle(await send(() => api.put(`/allocations/${uuid}`, body(allocations, null))), new Map([[uuid, allocations]]));
      } else if (roll < 0.55) {
        const uuids = [randomUUID(), randomUUID()];
        const wanted = new Map(uuids.map((uuid) => [uuid, someAllocations()]));
        mine.push(...uuids);
        const payload = Object.fromEntries([...wanted].map(([uuid, allocations]) => [uuid, body(allocations, null)]));
        settle(await send(() => api.post('/allocations', payload)), wanted);
      } else if (roll < 0.8) {
        // A move, as nova resizes: read the consumer's generation, then replace its allocations.
        const uuid = pick(mine);
        const read = await send(() => api.get(`/allocations/${uuid}`));
        if (read?.status !== 200) continue;
        const generation = (read.body.consumer_generation as number | undefined) ?? null;
        const allocations = someAllocations();
        settle(await send(() => api.put(`/allocations/${uuid}`, body(allocations, generation))), new Map([[uuid, allocations]]));
      } else {
        const uuid = pick(mine);
        settle(await send(() => api.delete(`/allocations/${uuid}`)), new Map([[uuid, {}]]));
      }
    }
  }

  const share = Math.floor(options.operations / options.workers);
  await Promise.all(Array.from({ length: options.workers }, (_, n) => worker(share + (n < options.operations % options.workers ? 1 : 0))));
  return result;
}

export interface CheckResult {
  /** Consumers whose stored allocations match none of the states the answers allow. */
  consumerMismatches: string[];
  /** Provider and class pairs whose usage differs from the sum of the allocations on the provider. */
  usageDifferences: string[];
  /** Provider and class pairs whose usage differs from the sum of what the consumers hold. */
  consumerSumDifferences: string[];
  /** Entries (storage format 3) that disagree with their providers, as GET /upgrade/entries names them. */
  entryDisagreements: string[];
}

/** One spelling per state: providers and classes sorted, providers with nothing left out. */
const canonical = (allocations: Allocations) =>
  JSON.stringify(
    Object.keys(allocations)
      .filter((provider) => Object.keys(allocations[provider]!).length > 0)
      .sort()
      .map((provider) => [provider, Object.entries(allocations[provider]!).sort()]),
  );

/** Reads everything back (with no faults injected) and lists what disagrees. */
export async function checkClaims(api: PlacementClient, result: WorkloadResult): Promise<CheckResult> {
  const check: CheckResult = { consumerMismatches: [], usageDifferences: [], consumerSumDifferences: [], entryDisagreements: [] };
  const held = new Map<string, Resources>();
  for (const [uuid, record] of result.consumers) {
    const read = await api.get(`/allocations/${uuid}`);
    if (read.status !== 200) throw new Error(`reading consumer ${uuid}: ${read.status}`);
    const actual: Allocations = Object.fromEntries(
      Object.entries(read.body.allocations as Record<string, { resources: Resources }>).map(([provider, entry]) => [provider, entry.resources]),
    );
    if (!record.possible.some((state) => canonical(state) === canonical(actual))) {
      check.consumerMismatches.push(`${uuid}: holds ${JSON.stringify(actual)}, expected one of ${JSON.stringify(record.possible)}`);
    }
    for (const [provider, resources] of Object.entries(actual)) {
      const sum = held.get(provider) ?? {};
      for (const [rc, n] of Object.entries(resources)) sum[rc] = (sum[rc] ?? 0) + n;
      held.set(provider, sum);
    }
  }
  for (const provider of result.providerUuids) {
    const usages = (await api.get(`/resource_providers/${provider}/usages`)).body.usages as Resources;
    const allocations = (await api.get(`/resource_providers/${provider}/allocations`)).body.allocations as Record<string, { resources: Resources }>;
    const allocated: Resources = {};
    for (const { resources } of Object.values(allocations)) {
      for (const [rc, n] of Object.entries(resources)) allocated[rc] = (allocated[rc] ?? 0) + n;
    }
    for (const rc of new Set([...Object.keys(usages), ...Object.keys(allocated)])) {
      const used = usages[rc] ?? 0;
      if (used !== (allocated[rc] ?? 0)) check.usageDifferences.push(`${provider} ${rc}: usage ${used}, allocations ${allocated[rc] ?? 0}`);
      const ofConsumers = held.get(provider)?.[rc] ?? 0;
      if (used !== ofConsumers) check.consumerSumDifferences.push(`${provider} ${rc}: usage ${used}, consumers hold ${ofConsumers}`);
    }
  }
  for (let marker: string | null = ''; marker !== null;) {
    const page = await api.get(`/upgrade/entries${marker ? `?marker=${marker}` : ''}`);
    if (page.status !== 200) throw new Error(`verifying the entries: ${page.status}`);
    const { disagreements, next } = page.body as { disagreements: { provider: string; subject: string; problem: string }[]; next: string | null };
    check.entryDisagreements.push(...disagreements.map(({ provider, subject, problem }) => `${provider} ${subject}: ${problem}`));
    marker = next;
  }
  return check;
}
