import { describe, expect, it } from 'vitest';
import type { ClaimState, DesiredConsumer } from '../../../shared/domain/claims.js';
import type { Consumer, Inventory, Provider, Resources } from '../../../shared/domain/model.js';
import { planReshape, type DesiredInventories } from '../../../shared/domain/reshape.js';
import { errorOf } from '../../support/errors.js';
import { inventory, makeProvider, NOW } from '../../support/fixtures.js';

const ROOT = '11111111-1111-1111-1111-111111111111';
const CHILD = '22222222-2222-2222-2222-222222222222';
const OTHER = '33333333-3333-3333-3333-333333333333';
const C1 = 'c1c1c1c1-0000-0000-0000-000000000001';
const C2 = 'c2c2c2c2-0000-0000-0000-000000000002';
const C3 = 'c3c3c3c3-0000-0000-0000-000000000003';

function provider(uuid: string, inventories: Provider['inventories'], usages: Resources = {}, generation = 3): Provider {
  return makeProvider(uuid, { inventories, usages, generation, parentUuid: uuid === ROOT ? null : ROOT, rootUuid: ROOT });
}

function consumer(uuid: string, allocations: Consumer['allocations'], generation = 1): Consumer {
  return {
    uuid,
    projectId: 'p',
    userId: 'u',
    generation,
    consumerType: 'INSTANCE',
    allocations,
    createdAt: NOW,
    updatedAt: NOW,
  };
}

function want(uuid: string, allocations: Record<string, Resources>, expectedGeneration: number | null = 1): DesiredConsumer {
  return { uuid, projectId: 'p', userId: 'u', expectedGeneration, consumerType: 'INSTANCE', allocations };
}

const inventories = (providerUuid: string, generation: number, records: Record<string, Inventory>): DesiredInventories => ({
  providerUuid,
  generation,
  inventories: records,
});

function state(providers: Provider[], consumers: Consumer[] = [], classExists: (name: string) => boolean = () => true): ClaimState {
  return {
    providers: new Map(providers.map((p) => [p.uuid, p])),
    consumers: new Map(consumers.map((c) => [c.uuid, c])),
    classExists,
  };
}

/** A root holding VCPU and VGPU, two consumers on its VGPU, and an empty child. */
function vgpuOnRoot(): ClaimState {
  return state(
    [provider(ROOT, { VCPU: inventory(8), VGPU: inventory(4) }, { VCPU: 2, VGPU: 3 }, 3), provider(CHILD, {}, {}, 0)],
    [consumer(C1, { [ROOT]: { VCPU: 2, VGPU: 1 } }), consumer(C2, { [ROOT]: { VGPU: 2 } })],
  );
}

const moveVgpu = () => [inventories(ROOT, 3, { VCPU: inventory(8) }), inventories(CHILD, 0, { VGPU: inventory(4) })];
const movedConsumers = () => [want(C1, { [ROOT]: { VCPU: 2 }, [CHILD]: { VGPU: 1 } }), want(C2, { [CHILD]: { VGPU: 2 } })];

describe('planReshape: moving VGPU from a root to its child', () => {
  it('writes each replaced provider whole, with its final inventories and usage', () => {
    const plan = planReshape(moveVgpu(), movedConsumers(), vgpuOnRoot(), NOW);
    const [root, child] = plan.providers;
    expect(root!.after).toMatchObject({ inventories: { VCPU: inventory(8) }, usages: { VCPU: 2 }, updatedAt: NOW });
    expect(child!.after).toMatchObject({ inventories: { VGPU: inventory(4) }, usages: { VGPU: 3 } });
    expect(root!.before.generation).toBe(3);
    expect(plan.usages).toEqual([]);
  });

  it("bumps a replaced provider's generation as upstream: interim inventory, allocations, final inventory", () => {
    const plan = planReshape(moveVgpu(), movedConsumers(), vgpuOnRoot(), NOW);
    expect(plan.providers.map((change) => change.after.generation)).toEqual([6, 3]);
  });

  it('skips the interim bump for an emptied inventory and the allocation bump for providers no allocation names', () => {
    const current = state([provider(CHILD, { VGPU: inventory(4) }, {}, 5)]);
    const plan = planReshape([inventories(CHILD, 5, {})], [], current, NOW);
    expect(plan.providers[0]!.after.generation).toBe(6);
    const refilled = planReshape([inventories(CHILD, 5, { VGPU: inventory(2) })], [], current, NOW);
    expect(refilled.providers[0]!.after.generation).toBe(7);
  });

  it('gives the consumers new generations and their new allocations', () => {
    const plan = planReshape(moveVgpu(), movedConsumers(), vgpuOnRoot(), NOW);
    expect(plan.consumers.map((change) => [change.after?.uuid, change.after?.generation, change.after?.allocations])).toEqual([
      [C1, 2, { [ROOT]: { VCPU: 2 }, [CHILD]: { VGPU: 1 } }],
      [C2, 2, { [CHILD]: { VGPU: 2 } }],
    ]);
  });

  it('moves usage by deltas on providers whose inventories stay as they are', () => {
    const current = state(
      [provider(ROOT, { VGPU: inventory(4) }, { VGPU: 1 }, 3), provider(OTHER, { VCPU: inventory(4) }, { VCPU: 1 }, 9)],
      [consumer(C1, { [ROOT]: { VGPU: 1 }, [OTHER]: { VCPU: 1 } })],
    );
    const plan = planReshape([inventories(ROOT, 3, { VGPU: inventory(4) })], [want(C1, { [ROOT]: { VGPU: 1 } })], current, NOW);
    expect(plan.usages).toEqual([{ provider: current.providers.get(OTHER), deltas: { VCPU: -1 }, bumpGeneration: false }]);
    expect(plan.providers[0]!.after.usages).toEqual({ VGPU: 1 });
  });
});

describe('planReshape: refusals, in upstream order', () => {
  it('400 for a provider in inventories that does not exist, before any generation', () => {
    const error = errorOf(() => planReshape([inventories(OTHER, 0, {}), inventories(ROOT, 99, {})], [], vgpuOnRoot(), NOW));
    expect(error.status).toBe(400);
    expect(error.code).toBe('placement.resource_provider.not_found');
    expect(error.message).toBe(`Resource provider ${OTHER} in inventories not found: No resource provider with uuid ${OTHER} found`);
  });

  it('409 concurrent_update for a stale provider generation, before the consumer generations', () => {
    const error = errorOf(() => planReshape([inventories(ROOT, 2, {})], [want(C1, {}, 7)], vgpuOnRoot(), NOW));
    expect(error.status).toBe(409);
    expect(error.code).toBe('placement.concurrent_update');
    expect(error.message).toBe(`resource provider generation conflict for provider ${ROOT}: actual: 3, given: 2`);
  });

  it('409 for a stale consumer generation, before unknown classes', () => {
    const current = { ...vgpuOnRoot(), classExists: (name: string) => name !== 'CUSTOM_NOPE' };
    const error = errorOf(() => planReshape([inventories(ROOT, 3, { CUSTOM_NOPE: inventory(1) })], [want(C1, {}, 7)], current, NOW));
    expect(error.message).toBe('consumer generation conflict - expected 1 but got 7');
  });

  it('400 malformed reshaper data for an unknown class, in inventories before allocations', () => {
    const current = { ...vgpuOnRoot(), classExists: (name: string) => !name.startsWith('CUSTOM_') };
    const body = [want(C1, { [ROOT]: { CUSTOM_NADA: 1 } })];
    expect(errorOf(() => planReshape([inventories(ROOT, 3, { VCPU: inventory(8), CUSTOM_NOPE: inventory(1) })], body, current, NOW)).message).toBe(
      'malformed reshaper data: No such resource class CUSTOM_NOPE.',
    );
    expect(errorOf(() => planReshape([inventories(ROOT, 3, { VCPU: inventory(8), VGPU: inventory(4) })], body, current, NOW)).message).toBe(
      'malformed reshaper data: No such resource class CUSTOM_NADA.',
    );
  });

  it('checks allocations against the interim inventory: new records over the current ones', () => {
    const shrunk = [inventories(ROOT, 3, { VCPU: inventory(1, { max_unit: 8 }) }), inventories(CHILD, 0, { VGPU: inventory(4) })];
    const error = errorOf(() => planReshape(shrunk, movedConsumers(), vgpuOnRoot(), NOW));
    expect(error.status).toBe(409);
    expect(error.message).toBe(
      `Unable to allocate inventory: Unable to create allocation for 'VCPU' on resource provider '${ROOT}'. The requested amount would exceed the capacity.`,
    );
  });

  it('refuses to remove a class only when it is still allocated in the final state', () => {
    const onlyC1Moves = [want(C1, { [ROOT]: { VCPU: 2 }, [CHILD]: { VGPU: 1 } })];
    const error = errorOf(() => planReshape(moveVgpu(), onlyC1Moves, vgpuOnRoot(), NOW));
    expect(error.status).toBe(409);
    expect(error.code).toBe('placement.inventory.inuse');
    expect(error.message).toBe(`update conflict: Inventory for 'VGPU' on resource provider '${ROOT}' in use.`);
    const everything = errorOf(() => planReshape([inventories(ROOT, 3, {})], [], vgpuOnRoot(), NOW));
    expect(everything.message).toBe(`update conflict: Inventory for 'VCPU, VGPU' on resource provider '${ROOT}' in use.`);
  });

  it('lets an emptied consumer release what it held', () => {
    const plan = planReshape(moveVgpu(), [...movedConsumers(), want(C3, {}, null)], vgpuOnRoot(), NOW);
    expect(plan.consumers.find((change) => change.after?.uuid === C3)?.after).toMatchObject({ generation: 0, allocations: {} });
  });
});
