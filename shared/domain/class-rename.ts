/**
 * Renaming a custom resource class in what names it: upstream's inventories
 * and allocations refer to the class by id, so a rename shows at once in
 * every inventory, usage and allocation, with no generation or update time
 * changed. Here they name it, so each record holding it is rewritten.
 */
import type { Provider } from './model.js';

/** The record with the entry `from` renamed `to`, in the same place; the record itself when it has no `from`. */
export function renameEntry<T>(record: Readonly<Record<string, T>>, from: string, to: string): Record<string, T> {
  if (!Object.hasOwn(record, from)) return record;
  return Object.fromEntries(Object.entries(record).map(([name, value]) => [name === from ? to : name, value]));
}

/** Whether a provider's inventories or usages name the class. */
export const providerNames = (provider: Provider, resourceClass: string): boolean =>
  Object.hasOwn(provider.inventories, resourceClass) || Object.hasOwn(provider.usages, resourceClass);
