/**
 * nova's side of a region, call for call, as nova 26 (Zed) makes them
 * (nova/compute/resource_tracker.py, nova/scheduler/client/report.py):
 *
 * Every compute node runs `update_available_resource` every 60 s
 * (update_resources_interval), one node after another spread over the
 * interval, each call waiting for the previous one:
 *
 * 1. `_remove_deleted_instances_allocations`: GET
 *    /resource_providers/{node}/allocations (no microversion: 1.0);
 * 2. `_update_to_placement`:
 *    - `get_provider_tree_and_ensure_root`: when the node's associations are
 *      older than resource_provider_association_refresh (300 s; checked at
 *      the start of a cycle, so in practice every 6th cycle), GET
 *      /resource_providers?in_tree={node} (1.14), then for each provider of
 *      the tree GET .../inventories (1.0), .../aggregates (1.19),
 *      .../traits (1.6), and for a provider in aggregates GET
 *      /resource_providers?member_of=in:{aggregates}&required=MISC_SHARES_VIA_AGGREGATE
 *      (1.18) plus the inventories, aggregates and traits of each sharing
 *      provider found;
 *    - `get_allocations_for_provider_tree`: GET
 *      /resource_providers/{rp}/allocations (1.0) for each provider of the
 *      tree, then GET /allocations/{consumer} (1.28) for every consumer
 *      those answers name.
 *    Nothing is written when nothing changed.
 *
 * The scheduler, per boot: GET /allocation_candidates (1.36, limit=1000,
 * the forbidden COMPUTE_STATUS_DISABLED trait nova's compute status filter
 * adds), then `claim_resources` on a candidate: GET /allocations/{instance}
 * (1.28) and PUT /allocations/{instance} (1.36). A 409
 * placement.concurrent_update is retried up to 3 more times after a random
 * sleep of up to 2 s per retry (report.py's `retries`); another 409 (the
 * capacity went) moves on to the next candidate. The chosen node then runs
 * `instance_claim`, i.e. `_update_to_placement` again. A delete runs
 * `update_usage` (`_update_to_placement`) on the node, then DELETE
 * /allocations/{instance} (1.0, force: the default
 * reclaim_instance_interval of 0). The resource tracker's work on one node
 * is serialised (COMPUTE_RESOURCE_SEMAPHORE), so these queue behind the
 * periodic task.
 */
import { randomUUID } from 'node:crypto';
import type { ApiResponse, PlacementClient } from '../../admin/placement-client.js';
import { SHARING_TRAIT } from '../../shared/domain/standard-catalog.js';
import type { LoadedRegion } from '../synthetic-region/api-loader.js';
import { INSTANCE_RESOURCES, PROJECT_ID, USER_ID, type Allocations, type NodeModel } from '../synthetic-region/region.js';

export const UPDATE_INTERVAL_MS = 60_000;
/** What nova's keystoneauth session (python-requests) sends with every request besides its token and version. */
const NOVA_HEADERS = { 'accept-encoding': 'gzip, deflate' };
export const ASSOCIATION_REFRESH_MS = 300_000;
const CLAIM_RETRIES = 3;
const ALTERNATES = 3;

/** The request kinds the report groups by: route, plus the query that changes what it costs. */
export const KINDS = {
  providerAllocations: 'GET /resource_providers/{uuid}/allocations',
  consumerAllocations: 'GET /allocations/{consumer_uuid}',
  inTree: 'GET /resource_providers?in_tree',
  sharing: 'GET /resource_providers?member_of&required',
  inventories: 'GET /resource_providers/{uuid}/inventories',
  aggregates: 'GET /resource_providers/{uuid}/aggregates',
  traits: 'GET /resource_providers/{uuid}/traits',
  candidates: 'GET /allocation_candidates',
  claim: 'PUT /allocations/{consumer_uuid}',
  delete: 'DELETE /allocations/{consumer_uuid}',
} as const;
export type Kind = (typeof KINDS)[keyof typeof KINDS];

export interface Sample {
  kind: Kind;
  /** ms since the run started, when the request was sent. */
  start: number;
  ms: number;
  /** 0: no answer (connection error or timeout). */
  status: number;
  /** Bytes of the response body as it came (compressed, when it was). */
  bytes: number;
  requestId?: string;
}

/** A cycle that could not start on time because the previous one was still running. */
export interface CycleLag {
  node: number;
  lagMs: number;
}

/** What a run saw. */
class Recorder {
  readonly samples: Sample[] = [];
  readonly lags: CycleLag[] = [];
  cycles = 0;
  failedCycles = 0;
  boots = 0;
  failedBoots = 0;
  deletes = 0;
  /** Calls sent and not answered yet. */
  inFlight = 0;
  /** Set when the run is over: nothing more is sent. */
  closed = false;
  readonly started = performance.now();

  now(): number {
    return performance.now() - this.started;
  }
}

/** A failed call ends the nova operation it belongs to, as the exception would. */
class CallFailed extends Error {}

async function call(recorder: Recorder, kind: Kind, send: () => Promise<ApiResponse>, accept: number[] = [200]): Promise<ApiResponse> {
  if (recorder.closed) throw new CallFailed('the run is over');
  const start = recorder.now();
  let response: ApiResponse;
  recorder.inFlight++;
  try {
    response = await send();
  } catch (error) {
    recorder.samples.push({ kind, start, ms: recorder.now() - start, status: 0, bytes: 0 });
    throw new CallFailed(`${kind}: ${(error as Error).message}`);
  } finally {
    recorder.inFlight--;
  }
  recorder.samples.push({
    kind,
    start,
    ms: response.ms,
    status: response.status,
    bytes: response.wireBytes,
    requestId: response.headers.get('x-openstack-request-id') ?? undefined,
  });
  if (!accept.includes(response.status)) throw new CallFailed(`${kind}: ${response.status}`);
  return response;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One nova-compute service with one node: its provider tree cache and its serialised resource tracker. */
class ComputeNode {
  /** The tree as the last in_tree answer listed it (the loader's view until the first refresh). */
  private tree: string[];
  private associationsRefreshedAt: number;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly model: NodeModel,
    tree: string[],
    private readonly client: PlacementClient,
    private readonly recorder: Recorder,
    /** When the node last refreshed its associations, in recorder time (negative: before the run). */
    refreshedAt: number,
  ) {
    this.tree = tree;
    this.associationsRefreshedAt = refreshedAt;
  }

  /** Runs `work` when the resource tracker is free, as COMPUTE_RESOURCE_SEMAPHORE does. */
  private serialised(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** update_available_resource. */
  periodic(): Promise<void> {
    return this.serialised(async () => {
      this.recorder.cycles++;
      try {
        await call(this.recorder, KINDS.providerAllocations, () => this.client.get(`/resource_providers/${this.model.uuid}/allocations`, { version: null }));
        await this.updateToPlacement();
      } catch (error) {
        if (!(error instanceof CallFailed)) throw error;
        this.recorder.failedCycles++;
      }
    });
  }

  /** instance_claim on the chosen node after the scheduler's claim. */
  instanceClaimed(): Promise<void> {
    return this.serialised(() => this.updateToPlacement());
  }

  /** _complete_deletion: update_usage under the lock, then the allocations' DELETE. */
  async deleteInstance(consumer: string): Promise<void> {
    await this.serialised(() => this.updateToPlacement());
    await call(this.recorder, KINDS.delete, () => this.client.delete(`/allocations/${consumer}`, { version: null }), [204, 404]);
  }

  private async updateToPlacement(): Promise<void> {
    if (this.recorder.now() - this.associationsRefreshedAt > ASSOCIATION_REFRESH_MS) await this.refreshTree();
    const consumers = new Set<string>();
    for (const uuid of this.tree) {
      const answer = await call(this.recorder, KINDS.providerAllocations, () => this.client.get(`/resource_providers/${uuid}/allocations`, { version: null }));
      for (const consumer of Object.keys(answer.body.allocations)) consumers.add(consumer);
    }
    for (const consumer of consumers) {
      await call(this.recorder, KINDS.consumerAllocations, () => this.client.get(`/allocations/${consumer}`, { version: '1.28' }));
    }
  }

  /** _ensure_resource_provider with a stale root: the tree, then every provider's associations. */
  private async refreshTree(): Promise<void> {
    const answer = await call(this.recorder, KINDS.inTree, () => this.client.get(`/resource_providers?in_tree=${this.model.uuid}`, { version: '1.14' }));
    this.tree = (answer.body.resource_providers as { uuid: string }[]).map((provider) => provider.uuid);
    for (const uuid of this.tree) {
      await this.refreshAssociations(uuid, true);
      if (uuid === this.model.uuid) this.associationsRefreshedAt = this.recorder.now();
    }
  }

  /** _refresh_associations. */
  private async refreshAssociations(uuid: string, withSharing: boolean): Promise<void> {
    const path = `/resource_providers/${uuid}`;
    await call(this.recorder, KINDS.inventories, () => this.client.get(`${path}/inventories`, { version: null }));
    const aggregates: string[] = (await call(this.recorder, KINDS.aggregates, () => this.client.get(`${path}/aggregates`, { version: '1.19' }))).body
      .aggregates;
    await call(this.recorder, KINDS.traits, () => this.client.get(`${path}/traits`, { version: '1.6' }));
    if (!withSharing || aggregates.length === 0) return;
    const query = `member_of=in:${aggregates.join(',')}&required=${SHARING_TRAIT}`;
    const sharing = await call(this.recorder, KINDS.sharing, () => this.client.get(`/resource_providers?${query}`, { version: '1.18' }));
    for (const provider of sharing.body.resource_providers as { uuid: string }[]) await this.refreshAssociations(provider.uuid, false);
  }
}

/** What nova-scheduler asks for a 2 vCPU / 4 GiB / 20 GB flavor (nova's default max_placement_results is 1000). */
export const CANDIDATES_QUERY =
  `resources=DISK_GB:${INSTANCE_RESOURCES.DISK_GB},MEMORY_MB:${INSTANCE_RESOURCES.MEMORY_MB},VCPU:${INSTANCE_RESOURCES.VCPU}` +
  '&required=!COMPUTE_STATUS_DISABLED&limit=1000';

/** nova-scheduler and conductor: boots and deletes. */
class Scheduler {
  private readonly deleting = new Set<string>();

  constructor(
    private readonly client: PlacementClient,
    private readonly recorder: Recorder,
    private readonly region: LoadedRegion,
    private readonly nodes: Map<string, ComputeNode>,
    private readonly random: () => number,
  ) {}

  /** One instance: candidates, a claim on one of them (or the next), then the chosen node's instance_claim. */
  async boot(): Promise<void> {
    this.recorder.boots++;
    const instance = randomUUID();
    try {
      const answer = await call(this.recorder, KINDS.candidates, () => this.client.get(`/allocation_candidates?${CANDIDATES_QUERY}`, { version: '1.36' }));
      const candidates = [...(answer.body.allocation_requests as { allocations: Allocations }[])];
      for (let attempt = 0; attempt < ALTERNATES && candidates.length > 0; attempt++) {
        const [chosen] = candidates.splice(Math.floor(this.random() * candidates.length), 1);
        const node = this.nodeOf(chosen!.allocations);
        if (node === undefined) continue;
        if (!(await this.claim(instance, chosen!.allocations))) continue;
        this.region.instances.set(instance, node.model.index);
        await node.instanceClaimed();
        return;
      }
      this.recorder.failedBoots++;
    } catch (error) {
      if (!(error instanceof CallFailed)) throw error;
      this.recorder.failedBoots++;
    }
  }

  /** claim_resources with report.py's `retries`: true when the allocations were written. */
  private async claim(instance: string, allocations: Allocations): Promise<boolean> {
    for (let retry = 0; retry <= CLAIM_RETRIES; retry++) {
      await sleep(this.random() * retry * 2000);
      await call(this.recorder, KINDS.consumerAllocations, () => this.client.get(`/allocations/${instance}`, { version: '1.28' }));
      const body = { allocations, project_id: PROJECT_ID, user_id: USER_ID, consumer_generation: null };
      const answer = await call(this.recorder, KINDS.claim, () => this.client.put(`/allocations/${instance}`, body, { version: '1.36' }), [204, 409]);
      if (answer.status === 204) return true;
      if (answer.body?.errors?.[0]?.code !== 'placement.concurrent_update') return false;
    }
    return false;
  }

  /** The simulated node whose tree holds the candidate's compute resources. */
  private nodeOf(allocations: Allocations): ComputeNode | undefined {
    for (const uuid of Object.keys(allocations)) {
      const node = this.nodes.get(uuid);
      if (node) return node;
    }
    return undefined;
  }

  /** Deletes a random instance of the region that is not being deleted already. */
  async deleteOne(): Promise<void> {
    const choices = [...this.region.instances.keys()].filter((uuid) => !this.deleting.has(uuid));
    if (choices.length === 0) return;
    const instance = choices[Math.floor(this.random() * choices.length)]!;
    const node = this.nodes.get(this.region.region.node(this.region.instances.get(instance)!).uuid);
    if (node === undefined) return;
    this.deleting.add(instance);
    this.recorder.deletes++;
    try {
      await node.deleteInstance(instance);
      this.region.instances.delete(instance);
    } catch (error) {
      if (!(error instanceof CallFailed)) throw error;
    } finally {
      this.deleting.delete(instance);
    }
  }
}

export interface RunOptions {
  /** Seconds before the measured window (every node has started cycling by then if it is at least 60). */
  warmupSeconds: number;
  /** Seconds measured. */
  durationSeconds: number;
  /** Boots per second, and as many deletes. */
  bootRate: number;
  seed: number;
  /** How long to wait for the calls still running when the window closes. */
  drainSeconds: number;
}

/** What one run measured: every request sent in the window, and how the schedule held. */
export interface RunResult {
  recorder: Recorder;
  windowStart: number;
  windowEnd: number;
  /** Calls still unanswered when the drain time ran out. */
  unfinished: number;
}

/**
 * Runs the region's nova for warmup + duration seconds: each node's periodic
 * task at its own offset in the 60 s interval (as nova-compute services
 * started at different times are), the associations of each node last
 * refreshed at a random point of the past 360 s (so refreshes are spread
 * as in a region that has run for a while), and boots and deletes arriving
 * at random (Poisson) at the boot rate.
 */
export async function simulateRegion(placement: PlacementClient, region: LoadedRegion, options: RunOptions, random: () => number): Promise<RunResult> {
  const client = placement.with({ headers: NOVA_HEADERS });
  const recorder = new Recorder();
  const nodes = new Map<string, ComputeNode>();
  const computes: ComputeNode[] = [];
  for (let index = 0; index < region.size; index++) {
    const model = region.region.node(index);
    const refreshedAt = -random() * (ASSOCIATION_REFRESH_MS + UPDATE_INTERVAL_MS);
    const node = new ComputeNode(model, region.region.treeOf(model), client, recorder, refreshedAt);
    computes.push(node);
    for (const uuid of region.region.treeOf(model)) nodes.set(uuid, node);
  }
  const scheduler = new Scheduler(client, recorder, region, nodes, random);
  const windowStart = options.warmupSeconds * 1000;
  const windowEnd = windowStart + options.durationSeconds * 1000;
  const background = new Set<Promise<void>>();
  const track = (work: Promise<void>) => {
    background.add(work);
    void work.finally(() => background.delete(work));
  };

  // Each node: a cycle every interval from its offset; a cycle that is due while the last one still runs starts late.
  for (const node of computes) {
    track(
      (async () => {
        let due = random() * UPDATE_INTERVAL_MS;
        while (due < windowEnd && !recorder.closed) {
          const wait = due - recorder.now();
          if (wait > 0) await sleep(wait);
          else if (-wait > 1000) recorder.lags.push({ node: node.model.index, lagMs: -wait });
          if (recorder.now() >= windowEnd) break;
          await node.periodic();
          due += UPDATE_INTERVAL_MS;
        }
      })(),
    );
  }
  // Boots and deletes: independent arrivals, each running on its own as the scheduler's workers do.
  const arrivals = async (work: () => Promise<void>) => {
    const gap = () => -Math.log(1 - random()) * (1000 / options.bootRate);
    for (let at = gap(); at < windowEnd; at += gap()) {
      const wait = at - recorder.now();
      if (wait > 0) await sleep(wait);
      if (recorder.closed) return;
      track(work());
    }
  };
  if (options.bootRate > 0) {
    track(arrivals(() => scheduler.boot()));
    track(arrivals(() => scheduler.deleteOne()));
  }
  await sleep(windowEnd - recorder.now());
  // Calls sent in the window may finish after it; what is still running after the drain time did not keep up.
  let drainTimer: NodeJS.Timeout | undefined;
  const drained = new Promise((resolve) => (drainTimer = setTimeout(resolve, options.drainSeconds * 1000)));
  await Promise.race([Promise.all(background), drained]);
  // Left pending, the timer would hold the process open for the rest of the drain time.
  clearTimeout(drainTimer);
  const unfinished = recorder.inFlight;
  recorder.closed = true;
  await Promise.all(background);
  return { recorder, windowStart, windowEnd, unfinished };
}
