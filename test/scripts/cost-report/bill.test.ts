import { describe, expect, it } from 'vitest';
import { KINDS } from '../../../scripts/bench-region/nova.js';
import { DEFAULT_SHAPE } from '../../../scripts/synthetic-region/region.js';
import {
  authenticationMonthly,
  baselineMonthly,
  billedMs,
  breakEven,
  durationCost,
  functionUrl,
  httpApi,
  httpApiMonthly,
  costPerRequest,
  provisioned,
  provisionedUnitsFor,
  requestsPerNodeHour,
  serverlessMonthly,
  type MeasuredKind,
} from '../../../scripts/cost-report/bill.js';
import { itemBytes, transactionWriteUnits } from '../../../scripts/cost-report/claim-units.js';
import { HOURS_PER_MONTH } from '../../../scripts/cost-report/prices.js';

const SHAPE = { ...DEFAULT_SHAPE, instancesPerNode: 30 };

describe('Lambda duration', () => {
  it('slows the computing below a full vCPU, not the waiting on DynamoDB (5 ms a request), and bills whole milliseconds', () => {
    expect(billedMs({ cpuMs: 10, dynamoCalls: 1 }, 1769)).toBe(15);
    expect(billedMs({ cpuMs: 10, dynamoCalls: 1 }, 3538)).toBe(15);
    // 10 ms x 1769 / 256 = 69.1 ms of computing.
    expect(billedMs({ cpuMs: 10, dynamoCalls: 1 }, 256)).toBe(75);
    expect(billedMs({ cpuMs: 0.2, dynamoCalls: 0 }, 1769)).toBe(1);
  });

  it('costs GB-seconds at the Arm price', () => {
    expect(durationCost({ cpuMs: 0, dynamoCalls: 20 }, 1024)).toBeCloseTo(0.1 * 0.0000133334, 12);
    expect(durationCost({ cpuMs: 0, dynamoCalls: 20 }, 256)).toBeCloseTo(0.25 * 0.1 * 0.0000133334, 12);
  });
});

describe('DynamoDB capacity modes', () => {
  const kind: MeasuredKind = {
    kind: KINDS.consumerAllocations,
    read: 1.5,
    write: 2,
    work: { cpuMs: 1, dynamoCalls: 1 },
    logBytes: 0,
    responseBytes: 0,
    memoryMb: 256,
  };
  it('prices on-demand units per million', () => {
    expect(costPerRequest(kind, httpApi(0, 256, 60)).dynamo).toBeCloseTo((1.5 * 0.125 + 2 * 0.625) / 1e6, 15);
  });

  it('prices provisioned capacity as the capacity-seconds a request holds at the 70% target', () => {
    expect(provisionedUnitsFor(70)).toBeCloseTo(100);
    expect(provisionedUnitsFor(50, 0.5)).toBeCloseTo(100);
    const door = provisioned(functionUrl(512, 20, 120));
    expect(door).toMatchObject({ name: 'function URL, provisioned', capacity: 'provisioned' });
    expect(costPerRequest(kind, door).dynamo).toBeCloseTo(((1.5 / 0.7) * 0.00013 + (2 / 0.7) * 0.00065) / 3600, 15);
    // About 40% of the on-demand price for reads, as much for writes.
    expect(costPerRequest(kind, door).dynamo).toBeLessThan(costPerRequest(kind, functionUrl(512, 20, 120)).dynamo);
  });
});

describe('HTTP API tiers', () => {
  it('prices the first 300 million at $1.00, the next 700 million at $0.90, the rest at $0.80 a million', () => {
    expect(httpApiMonthly(100e6)).toBeCloseTo(100);
    expect(httpApiMonthly(300e6)).toBeCloseTo(300);
    expect(httpApiMonthly(1e9)).toBeCloseTo(930);
    expect(httpApiMonthly(2e9)).toBeCloseTo(1730);
  });
});

describe("nova's requests per node and hour", () => {
  it('are 60 cycles of allocations reads and 10 association refreshes, plus the boots', () => {
    const idle = requestsPerNodeHour(SHAPE, 0);
    // 1.4 tree providers a node on average (20% with 2 PFs); half the nodes aggregated with a sharing provider.
    expect(idle.get(KINDS.providerAllocations)).toBeCloseTo(60 * 2.4);
    expect(idle.get(KINDS.consumerAllocations)).toBe(60 * 30);
    expect(idle.get(KINDS.inTree)).toBe(10);
    expect(idle.get(KINDS.inventories)).toBeCloseTo(10 * 1.9);
    expect(idle.get(KINDS.sharing)).toBe(5);
    expect(idle.get(KINDS.claim)).toBe(0);
    const total = [...idle.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo(2016);

    const booting = requestsPerNodeHour(SHAPE, 1);
    expect(booting.get(KINDS.candidates)).toBe(1);
    expect(booting.get(KINDS.claim)).toBe(1);
    expect(booting.get(KINDS.delete)).toBe(1);
    // The scheduler's GET, and the node's consumers read by instance_claim and again by update_usage.
    expect(booting.get(KINDS.consumerAllocations)! - idle.get(KINDS.consumerAllocations)!).toBe(62);
  });
});

/** One kind that is the whole mix: a request with known units, duration and bytes. */
const polled: MeasuredKind = {
  kind: KINDS.consumerAllocations,
  read: 2,
  write: 0,
  work: { cpuMs: 0, dynamoCalls: 4 },
  logBytes: 360,
  responseBytes: 200,
  memoryMb: 256,
};
const onlyPolling = new Map([[KINDS.consumerAllocations, 1000]]);

describe('the serverless bill', () => {
  it('adds up each component for the month', () => {
    const bill = serverlessMonthly([polled], onlyPolling, 10, httpApi(220, 256, 60));
    const requests = 1000 * 10 * HOURS_PER_MONTH;
    expect(bill.requests).toBe(requests);
    expect(bill.frontDoor).toBeCloseTo(requests / 1e6);
    expect(bill.lambdaRequests).toBeCloseTo((requests / 1e6) * 0.2);
    expect(bill.lambdaDuration).toBeCloseTo(requests * 0.25 * 0.02 * 0.0000133334);
    expect(bill.dynamo).toBeCloseTo((requests * 2 * 0.125) / 1e6);
    expect(bill.logs).toBeCloseTo(((requests * (360 + 220)) / 1e9) * 0.5);
    expect(bill.transfer).toBeCloseTo(((requests * 500) / 1e9) * 0.09);
  });

  it('bills every request at the router memory behind the function URL, with no front-door charge or access log', () => {
    const bill = serverlessMonthly([polled], onlyPolling, 10, functionUrl(1024, 20, 120));
    const requests = 1000 * 10 * HOURS_PER_MONTH;
    expect(bill.frontDoor).toBe(0);
    expect(bill.lambdaDuration).toBeCloseTo(requests * 1 * 0.02 * 0.0000133334);
    expect(bill.logs).toBeCloseTo(((requests * 360) / 1e9) * 0.5);
  });

  it('validates each token once per authorizer cache lifetime, or once per token cache lifetime shared by the router instances', () => {
    // 60 nodes, 60 s: one authorizer invocation of 100 ms at 256 MB a second.
    const seconds = 3600 * HOURS_PER_MONTH;
    expect(authenticationMonthly(httpApi(220, 256, 60), 60, 1000)).toBeCloseTo(seconds * (0.25 * 0.1 * 0.0000133334 + 0.2e-6));
    // 100 requests a second of 50 ms: 5 instances. Keystone checks each of 120 tokens once every 120 s (100 ms at 1 GB and
    // the shared item's write unit); each instance reads each token's item once every 120 s (5 ms waiting, half a read unit).
    const door = functionUrl(1024, 50, 120);
    expect(door.validationsPerSecond(120, 100)).toBe(1);
    expect(door.sharedLookupsPerSecond(120, 100)).toBe(5);
    const validation = 0.1 * 0.0000133334 + 0.625e-6;
    const lookup = 0.005 * 0.0000133334 + 0.5 * 0.125e-6;
    expect(authenticationMonthly(door, 120, 100)).toBeCloseTo(seconds * (validation + 5 * lookup));
    // A longer cache lifetime: fewer of both.
    expect(authenticationMonthly(functionUrl(1024, 50, 300), 120, 100)).toBeCloseTo((seconds * (validation + 5 * lookup) * 120) / 300);
  });
});

describe('the self-hosted baseline', () => {
  it('is at least two VMs, an ALB and a Multi-AZ database, and adds VMs with the request rate', () => {
    const small = baselineMonthly(100, [polled], onlyPolling, 10);
    expect(small.vms).toBe(2);
    expect(small.ec2).toBeCloseTo(2 * (0.0816 * HOURS_PER_MONTH + 20 * 0.08));
    expect(small.rds).toBeCloseTo(2 * 0.073 * HOURS_PER_MONTH + 2 * 20 * 0.115);
    expect(small.total).toBeCloseTo(small.ec2 + small.alb + small.rds + small.transfer);
    // 1,000 nodes x 1,000 requests an hour: 278 a second, 3 VMs at 100 a second.
    expect(baselineMonthly(100, [polled], onlyPolling, 1000).vms).toBe(3);
  });

  it('breaks even at the first region size where the serverless bill reaches it', () => {
    const door = httpApi(220, 256, 60);
    const nodes = breakEven([polled], onlyPolling, door, 100)!;
    expect(nodes).toBeGreaterThan(1);
    const serverless = (size: number) => serverlessMonthly([polled], onlyPolling, size, door).total;
    const own = (size: number) => baselineMonthly(100, [polled], onlyPolling, size).total;
    expect(serverless(nodes)).toBeGreaterThanOrEqual(own(nodes));
    expect(serverless(nodes - 1)).toBeLessThan(own(nodes - 1));
  });
});

describe("a claim's write units", () => {
  it('are 2 per started KB of each item, plus 1 per KB for each index holding it', () => {
    const small = { pk: 'a', sk: 'b' };
    expect(itemBytes(small)).toBe(6);
    expect(transactionWriteUnits([small])).toBe(2);
    expect(transactionWriteUnits([{ ...small, spk: 'SHARD#1' }])).toBe(3);
    const large = { pk: 'a', sk: 'b', spk: 'SHARD#1', data: 'x'.repeat(1500) };
    expect(transactionWriteUnits([large])).toBe(6);
    expect(transactionWriteUnits([small, large])).toBe(8);
  });
});
