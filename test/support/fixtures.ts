/** Domain objects for unit tests: sensible defaults, overridden per test. */
import type { Inventory, Provider } from '../../shared/domain/model.js';

export const NOW = '2024-01-01T00:00:00.000Z';

export function inventory(total: number, extra: Partial<Inventory> = {}): Inventory {
  return { total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1, ...extra };
}

/** A root provider without inventory, traits or aggregates, unless `fields` says otherwise. */
export function makeProvider(uuid: string, fields: Partial<Provider> = {}): Provider {
  return {
    uuid,
    name: uuid,
    generation: 1,
    parentUuid: null,
    rootUuid: uuid,
    inventories: {},
    usages: {},
    traits: [],
    aggregates: [],
    children: [],
    createdAt: NOW,
    updatedAt: NOW,
    ...fields,
  };
}
