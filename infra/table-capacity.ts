/**
 * The table's capacity mode (`-c capacity=on-demand|provisioned`) and, when
 * provisioned, the read and write capacity auto scaling keeps the table and
 * each index between, sized from the region like the brakes (infra/brakes.ts,
 * whose model of nova-compute's polling this uses). Pure arithmetic, so that
 * the reasoning is tested and the documented figures
 * (docs/operators/deploy.md, "Table capacity") come from the same numbers.
 *
 * Auto scaling moves provisioned capacity to keep consumption at the target
 * share of it (70% by default), so the floor is the steady load divided by
 * that share: `provisionedUnits`, the one sizing rule, which the cost report
 * prices provisioned capacity by too.
 */
import type { HandlerName } from '../shared/http/routes.js';
import { NOVA_COMPUTE_POLLING, type RegionSize } from './brakes.js';

export const CAPACITY_MODES = ['on-demand', 'provisioned'] as const;
export type CapacityMode = (typeof CAPACITY_MODES)[number];

/** Auto scaling's default target utilisation, and the range the `capacityTargetPercent` context accepts (as AWS's does, 20-90). */
export const DEFAULT_TARGET_PERCENT = 70;
export const TARGET_PERCENT_RANGE = { min: 20, max: 90 } as const;

/**
 * Read units of one polled request (test/functions/polled-reads.test.ts
 * asserts each): the fixed part of the allocations family is
 * GET /resource_providers/{node}/allocations (the node and its 30
 * allocations, strongly consistent, 5-8 KB: 2), the per-instance part
 * GET /allocations/{consumer} (the consumer strongly consistent, its
 * provider eventually: 1.5); resource-providers is the in_tree listing
 * (one index query: 0.5); inventories, aggregates and traits read the
 * provider item strongly consistent (under 4 KB: 1).
 */
const READ_UNITS: Partial<Record<HandlerName, { perRequest: number; perInstanceRequest: number }>> = {
  allocations: { perRequest: 2, perInstanceRequest: 1.5 },
  'resource-providers': { perRequest: 0.5, perInstanceRequest: 0 },
  inventories: { perRequest: 1, perInstanceRequest: 0 },
  aggregates: { perRequest: 1, perInstanceRequest: 0 },
  traits: { perRequest: 1, perInstanceRequest: 0 },
};

/**
 * Write units of one claim (shared/storage/consumed-capacity.ts: the table 6,
 * each index 2), and the claims a second the write capacity takes without
 * scaling: 3 for 1,000 nodes, far more than a region's steady boots and
 * deletes (a few a node a day), for the bursts scheduling makes. Auto
 * scaling may go to ten times that (a boot storm, an evacuation).
 */
const CLAIM_WRITE_UNITS = { table: 6, index: 2 };
const CLAIMS_PER_SECOND_PER_NODE = 0.003;
const WRITE_SCALE_FACTOR = 10;
/** Reads may scale to twice the floor: nova-computes started together poll in step (infra/brakes.ts's headroom). */
const READ_SCALE_FACTOR = 2;
/** No table or index is provisioned below this: a small region's idle capacity costs cents, a throttled operator's script more. */
const MIN_UNITS = 5;

/** The capacity to provision for a steady load of `steadyUnitsPerSecond` kept at `targetPercent` of it. */
export const provisionedUnits = (steadyUnitsPerSecond: number, targetPercent: number): number => Math.ceil((steadyUnitsPerSecond * 100) / targetPercent);

export interface ScalingRange {
  min: number;
  max: number;
}

export interface ProvisionedCapacity {
  targetPercent: number;
  /** The polling's steady read units a second, for the documented reasoning. */
  steadyReadUnitsPerSecond: number;
  table: { read: ScalingRange; write: ScalingRange };
  /** Each secondary index's. */
  index: { read: ScalingRange; write: ScalingRange };
}

export type TableCapacity = { mode: 'on-demand' } | ({ mode: 'provisioned' } & ProvisionedCapacity);

const range = (steady: number, targetPercent: number, factor: number): ScalingRange => {
  const min = Math.max(MIN_UNITS, provisionedUnits(steady, targetPercent));
  return { min, max: factor * min };
};

export function provisionedCapacityFor(region: RegionSize, targetPercent = DEFAULT_TARGET_PERCENT): ProvisionedCapacity {
  const readsPerSecond = (family: HandlerName) => {
    const units = READ_UNITS[family] ?? { perRequest: 0, perInstanceRequest: 0 };
    return NOVA_COMPUTE_POLLING.filter((load) => load.family === family).reduce(
      (sum, load) =>
        sum + (region.computeNodes * (load.perHour * units.perRequest + load.perInstancePerHour * region.instancesPerNode * units.perInstanceRequest)) / 3600,
      0,
    );
  };
  const tableReads = NOVA_COMPUTE_POLLING.filter((load) => load.family !== 'resource-providers').reduce((sum, load) => sum + readsPerSecond(load.family), 0);
  const claims = region.computeNodes * CLAIMS_PER_SECOND_PER_NODE;
  return {
    targetPercent,
    steadyReadUnitsPerSecond: tableReads + readsPerSecond('resource-providers'),
    table: { read: range(tableReads, targetPercent, READ_SCALE_FACTOR), write: range(claims * CLAIM_WRITE_UNITS.table, targetPercent, WRITE_SCALE_FACTOR) },
    index: {
      // The in_tree listing reads the byShard index steadily; the candidate search walks it in bursts, up to as much as
      // the polling reads the table.
      read: { min: range(readsPerSecond('resource-providers'), targetPercent, 1).min, max: range(tableReads, targetPercent, READ_SCALE_FACTOR).max },
      write: range(claims * CLAIM_WRITE_UNITS.index, targetPercent, WRITE_SCALE_FACTOR),
    },
  };
}
