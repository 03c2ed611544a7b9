import { describe, expect, it } from 'vitest';
import { checkConsumerGeneration, planClaim, planRemoval, type ClaimState, type DesiredConsumer } from '../../../shared/domain/claims.js';
import type { Consumer, Provider, Resources } from '../../../shared/domain/model.js';
import { errorOf } from '../../support/errors.js';
import { inventory, makeProvider, NOW } from '../../support/fixtures.js';

const RP1 = '11111111-1111-1111-1111-111111111111';
const RP2 = '22222222-2222-2222-2222-222222222222';
const C1 = 'c1c1c1c1-0000-0000-0000-000000000001';
const C2 = 'c2c2c2c2-0000-0000-0000-000000000002';
const C3 = 'c3c3c3c3-0000-0000-0000-000000000003';

function provider(uuid: string, inventories: Provider['inventories'], usages: Resources = {}, generation = 3): Provider {
  return makeProvider(uuid, { inventories, usages, generation });
}

function consumer(uuid: string, allocations: Consumer['allocations'], generation = 1, extra: Partial<Consumer> = {}): Consumer {
  return {
    uuid,
    projectId: 'p',
    userId: 'u',
    generation,
    consumerType: undefined,
    allocations,
    createdAt: '2023-01-01T00:00:00.000Z',
    updatedAt: '2023-01-01T00:00:00.000Z',
    ...extra,
  };
}

function want(uuid: string, allocations: Record<string, Resources>, extra: Partial<DesiredConsumer> = {}): DesiredConsumer {
  return { uuid, projectId: 'p', userId: 'u', allocations, ...extra };
}

function state(providers: Provider[], consumers: Consumer[] = [], classExists: (name: string) => boolean = () => true): ClaimState {
  return {
    providers: new Map(providers.map((p) => [p.uuid, p])),
    consumers: new Map(consumers.map((c) => [c.uuid, c])),
    classExists,
  };
}

describe('planClaim: capacity and inventory constraints', () => {
  it('refuses an allocation that would exceed the capacity', () => {
    const rp = provider(RP1, { VCPU: inventory(8) }, { VCPU: 6 });
    const error = errorOf(() => planClaim([want(C1, { [RP1]: { VCPU: 3 } })], state([rp]), NOW));
    expect(error.status).toBe(409);
    expect(error.message).toBe(
      `Unable to allocate inventory: Unable to create allocation for 'VCPU' on resource provider '${RP1}'. The requested amount would exceed the capacity.`,
    );
  });

  it('counts reserved and allocation_ratio in the capacity', () => {
    const rp = provider(RP1, { VCPU: inventory(8, { reserved: 2, allocation_ratio: 2, max_unit: 100 }) }, { VCPU: 10 });
    expect(planClaim([want(C1, { [RP1]: { VCPU: 2 } })], state([rp]), NOW).providers[0]!.deltas).toEqual({ VCPU: 2 });
    expect(errorOf(() => planClaim([want(C1, { [RP1]: { VCPU: 3 } })], state([rp]), NOW)).status).toBe(409);
  });

  it('adds up what several consumers of one request take from the same inventory', () => {
    const rp = provider(RP1, { VCPU: inventory(2) });
    const error = errorOf(() =>
      planClaim([want(C1, { [RP1]: { VCPU: 1 } }), want(C2, { [RP1]: { VCPU: 1 } }), want(C3, { [RP1]: { VCPU: 1 } })], state([rp]), NOW, {
        form: 'post',
      }),
    );
    expect(error.status).toBe(409);
    expect(error.message).toContain('would exceed the capacity');
  });

  it.each([
    ['below min_unit', { min_unit: 4 }, 2],
    ['above max_unit', { max_unit: 2 }, 3],
    ['not a multiple of step_size', { step_size: 4 }, 6],
  ])('refuses an amount %s', (_name, constraint, amount) => {
    const rp = provider(RP1, { DISK_GB: inventory(100, constraint) });
    const error = errorOf(() => planClaim([want(C1, { [RP1]: { DISK_GB: amount } })], state([rp]), NOW));
    expect(error.status).toBe(409);
    expect(error.message).toBe(
      `Unable to allocate inventory: Unable to create allocation for 'DISK_GB' on resource provider '${RP1}'. The requested amount would violate inventory constraints.`,
    );
  });

  it('refuses a class the provider has no inventory of', () => {
    const rp = provider(RP1, { VCPU: inventory(8) });
    const error = errorOf(() => planClaim([want(C1, { [RP1]: { VCPU: 1, PCI_DEVICE: 1 } })], state([rp]), NOW));
    expect(error.status).toBe(409);
    expect(error.message).toBe(`Unable to allocate inventory: Inventory for 'PCI_DEVICE' on resource provider '${RP1}' invalid.`);
  });

  it('refuses a provider with none of the requested classes', () => {
    const error = errorOf(() => planClaim([want(C1, { [RP1]: { DISK_GB: 10 } })], state([provider(RP1, {})]), NOW));
    expect(error.status).toBe(409);
    expect(error.message).toContain(`Inventory for 'DISK_GB' on resource provider '${RP1}' invalid.`);
    const several = errorOf(() => planClaim([want(C1, { [RP1]: { CUSTOM_X: 1, DISK_GB: 10, VCPU: 1 } })], state([provider(RP1, {})]), NOW));
    // Ids 10000, 2, 0 in a CPython set iterate as 10000, 0, 2 (10000 lands in slot 0).
    expect(several.message).toBe(`Unable to allocate inventory: Inventory for 'CUSTOM_X, VCPU, DISK_GB' on resource provider '${RP1}' invalid.`);
    const reversed = errorOf(() => planClaim([want(C1, { [RP1]: { DISK_GB: 20, IPV4_ADDRESS: 1 } })], state([provider(RP1, {})]), NOW));
    expect(reversed.message).toContain(`Inventory for 'IPV4_ADDRESS, DISK_GB' on`);
  });

  it('answers 400 for a provider that does not exist', () => {
    const error = errorOf(() => planClaim([want(C1, { [RP2]: { VCPU: 1 } })], state([provider(RP1, { VCPU: inventory(8) })]), NOW));
    expect(error.status).toBe(400);
    expect(error.message).toBe(`Allocation for resource provider '${RP2}' that does not exist.`);
  });

  it('answers 400 for a resource class that does not exist, worded per operation', () => {
    const st = state([provider(RP1, { VCPU: inventory(8) })], [], (name) => name !== 'CUSTOM_PONY');
    const put = errorOf(() => planClaim([want(C1, { [RP1]: { CUSTOM_PONY: 1 } })], st, NOW, { form: 'put' }));
    expect(put.status).toBe(400);
    expect(put.message).toBe(`Unable to allocate inventory for consumer ${C1}: No such resource class CUSTOM_PONY.`);
    const post = errorOf(() => planClaim([want(C1, { [RP1]: { CUSTOM_PONY: 1 } })], st, NOW, { form: 'post' }));
    expect(post.message).toBe('Unable to allocate inventory No such resource class CUSTOM_PONY.');
  });

  it("does not count the consumer's own current allocation against it", () => {
    const rp = provider(RP1, { VCPU: inventory(4) }, { VCPU: 4 });
    const plan = planClaim([want(C1, { [RP1]: { VCPU: 4 } })], state([rp], [consumer(C1, { [RP1]: { VCPU: 4 } })]), NOW);
    expect(plan.providers).toEqual([{ provider: rp, deltas: {}, bumpGeneration: true }]);
  });
});

describe('planClaim: deltas and consumer changes', () => {
  it('creates a new consumer at generation 1 and adds its usage', () => {
    const rp = provider(RP1, { VCPU: inventory(8), MEMORY_MB: inventory(1024) }, { VCPU: 2 });
    const plan = planClaim([want(C1, { [RP1]: { VCPU: 2, MEMORY_MB: 512 } }, { consumerType: 'INSTANCE' })], state([rp]), NOW);
    expect(plan.providers).toEqual([{ provider: rp, deltas: { VCPU: 2, MEMORY_MB: 512 }, bumpGeneration: true }]);
    expect(plan.consumers).toEqual([
      {
        before: undefined,
        after: {
          uuid: C1,
          projectId: 'p',
          userId: 'u',
          generation: 1,
          consumerType: 'INSTANCE',
          allocations: { [RP1]: { VCPU: 2, MEMORY_MB: 512 } },
          createdAt: NOW,
          updatedAt: NOW,
        },
      },
    ]);
  });

  it('moves usage when a consumer moves between providers; the old provider keeps its generation', () => {
    const rp1 = provider(RP1, { VCPU: inventory(8), DISK_GB: inventory(100) }, { VCPU: 4, DISK_GB: 10 });
    const rp2 = provider(RP2, { VCPU: inventory(8) }, { VCPU: 1 });
    const before = consumer(C1, { [RP1]: { VCPU: 3, DISK_GB: 10 } }, 4);
    const plan = planClaim([want(C1, { [RP1]: { DISK_GB: 20 }, [RP2]: { VCPU: 3 } })], state([rp1, rp2], [before]), NOW);
    const byUuid = new Map(plan.providers.map((change) => [change.provider.uuid, change]));
    expect(byUuid.get(RP1)).toEqual({ provider: rp1, deltas: { VCPU: -3, DISK_GB: 10 }, bumpGeneration: true });
    expect(byUuid.get(RP2)).toEqual({ provider: rp2, deltas: { VCPU: 3 }, bumpGeneration: true });

    const away = planClaim([want(C1, { [RP2]: { VCPU: 3 } })], state([rp1, rp2], [before]), NOW);
    const left = away.providers.find((change) => change.provider.uuid === RP1);
    expect(left).toEqual({ provider: rp1, deltas: { VCPU: -3, DISK_GB: -10 }, bumpGeneration: false });
    expect(away.consumers[0]!.after).toMatchObject({ generation: 5, allocations: { [RP2]: { VCPU: 3 } }, createdAt: before.createdAt });
  });

  it('deletes a consumer whose allocations become empty and gives its usage back', () => {
    const rp = provider(RP1, { VCPU: inventory(8) }, { VCPU: 5 });
    const before = consumer(C1, { [RP1]: { VCPU: 2 } }, 2);
    const plan = planClaim([want(C1, {}, { expectedGeneration: 2 })], state([rp], [before]), NOW);
    expect(plan.consumers).toEqual([{ before, after: undefined }]);
    // Upstream writes zero-amount lines for an emptied consumer, so its providers get a new generation.
    expect(plan.providers).toEqual([{ provider: rp, deltas: { VCPU: -2 }, bumpGeneration: true }]);
  });

  it('keeps a consumer that never had allocations and gets none, at generation 0', () => {
    const plan = planClaim([want(C1, {}, { expectedGeneration: null })], state([]), NOW);
    expect(plan.providers).toEqual([]);
    expect(plan.consumers).toEqual([{ before: undefined, after: expect.objectContaining({ generation: 0, allocations: {} }) }]);
    const again = planClaim([want(C1, {}, { expectedGeneration: 0 })], state([], [consumer(C1, {}, 0)]), NOW);
    expect(again.consumers).toEqual([]);
  });

  it('updates project, user and type with the allocations', () => {
    const rp = provider(RP1, { VCPU: inventory(8) }, { VCPU: 1 });
    const before = consumer(C1, { [RP1]: { VCPU: 1 } }, 1, { consumerType: 'INSTANCE' });
    const plan = planClaim([want(C1, { [RP1]: { VCPU: 1 } }, { projectId: 'p2', consumerType: 'MIGRATION' })], state([rp], [before]), NOW);
    expect(plan.consumers[0]!.after).toMatchObject({ projectId: 'p2', userId: 'u', consumerType: 'MIGRATION', generation: 2 });
    const keep = planClaim([want(C1, { [RP1]: { VCPU: 1 } })], state([rp], [before]), NOW);
    expect(keep.consumers[0]!.after!.consumerType).toBe('INSTANCE');
  });

  it('sums the deltas of several consumers on one provider', () => {
    const rp = provider(RP1, { VCPU: inventory(8) }, { VCPU: 3 });
    const plan = planClaim([want(C1, {}), want(C2, { [RP1]: { VCPU: 4 } })], state([rp], [consumer(C1, { [RP1]: { VCPU: 3 } })]), NOW, { form: 'post' });
    expect(plan.providers).toEqual([{ provider: rp, deltas: { VCPU: 1 }, bumpGeneration: true }]);
    expect(plan.consumers.map((change) => change.after?.uuid ?? `-${change.before!.uuid}`)).toEqual([`-${C1}`, C2]);
  });
});

describe('consumer generations', () => {
  it('requires null for a consumer that does not exist', () => {
    expect(() => checkConsumerGeneration(undefined, null)).not.toThrow();
    const error = errorOf(() => checkConsumerGeneration(undefined, 5));
    expect(error.status).toBe(409);
    expect(error.code).toBe('placement.concurrent_update');
    expect(error.message).toBe('consumer generation conflict - expected null but got 5');
  });

  it('requires the current generation of an existing consumer', () => {
    const existing = consumer(C1, {}, 3);
    expect(() => checkConsumerGeneration(existing, 3)).not.toThrow();
    expect(errorOf(() => checkConsumerGeneration(existing, 1)).message).toBe('consumer generation conflict - expected 3 but got 1');
    expect(errorOf(() => checkConsumerGeneration(existing, null)).message).toBe('consumer generation conflict - expected 3 but got None');
  });

  it('is not checked before 1.28 (undefined)', () => {
    expect(() => checkConsumerGeneration(consumer(C1, {}, 3), undefined)).not.toThrow();
  });

  it('is checked for every consumer before providers and capacity', () => {
    const rp = provider(RP1, { VCPU: inventory(1) });
    const error = errorOf(() =>
      planClaim([want(C1, { [RP2]: { VCPU: 9 } }, { expectedGeneration: null }), want(C2, {}, { expectedGeneration: 7 })], state([rp]), NOW),
    );
    expect(error.status).toBe(409);
    expect(error.message).toBe('consumer generation conflict - expected null but got 7');
  });
});

describe('planRemoval', () => {
  it('deletes the consumer and drops usage without new provider generations', () => {
    const rp1 = provider(RP1, { VCPU: inventory(8) }, { VCPU: 5 });
    const rp2 = provider(RP2, { DISK_GB: inventory(80) }, { DISK_GB: 40 });
    const before = consumer(C1, { [RP1]: { VCPU: 2 }, [RP2]: { DISK_GB: 40 } });
    const plan = planRemoval(
      before,
      new Map([
        [RP1, rp1],
        [RP2, rp2],
      ]),
    );
    expect(plan.consumers).toEqual([{ before, after: undefined }]);
    expect(plan.providers).toEqual([
      { provider: rp1, deltas: { VCPU: -2 }, bumpGeneration: false },
      { provider: rp2, deltas: { DISK_GB: -40 }, bumpGeneration: false },
    ]);
  });
});
