/** Domain objects for unit tests: sensible defaults, overridden per test. */
import type { Inventory, Provider } from '../../shared/domain/model.js';
import { newProvider } from '../../shared/domain/provider-tree.js';

export const NOW = '2024-01-01T00:00:00.000Z';

export function inventory(total: number, extra: Partial<Inventory> = {}): Inventory {
  return { total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1, ...extra };
}

/** A root provider without inventory, traits or aggregates, unless `fields` says otherwise. */
export function makeProvider(uuid: string, fields: Partial<Provider> = {}): Provider {
  return { ...newProvider(uuid, uuid, undefined, NOW), generation: 1, ...fields };
}
