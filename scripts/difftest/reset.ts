/**
 * Empties a Placement service through its public API, so that a seeded run
 * starts from the same (empty) state on both services: every consumer's
 * allocations, every provider (leaves first), every custom resource class
 * and custom trait.
 */
import type { PlacementClient } from '../../admin/placement-client.js';

async function expect(what: string, answer: Promise<{ status: number; text: string }>, statuses: number[]) {
  const { status, text } = await answer;
  if (!statuses.includes(status)) throw new Error(`resetting: ${what} answered ${status}: ${text.slice(0, 300)}`);
  return status;
}

export async function resetService(placement: PlacementClient): Promise<void> {
  const api = placement.with({ version: '1.39', token: 'admin' });
  const listing = await api.get('/resource_providers');
  if (listing.status !== 200) throw new Error(`resetting ${api.baseUrl}: GET /resource_providers answered ${listing.status}`);
  const providers = listing.body.resource_providers as { uuid: string; parent_provider_uuid: string | null }[];
  const consumers = new Set<string>();
  for (const { uuid } of providers) {
    const held = await api.get(`/resource_providers/${uuid}/allocations`);
    for (const consumer of Object.keys(held.body?.allocations ?? {})) consumers.add(consumer);
  }
  for (const consumer of consumers) await expect(`DELETE /allocations/${consumer}`, api.delete(`/allocations/${consumer}`), [204, 404]);
  let remaining = providers;
  while (remaining.length > 0) {
    const parents = new Set(remaining.map((provider) => provider.parent_provider_uuid));
    const leaves = remaining.filter((provider) => !parents.has(provider.uuid));
    for (const { uuid } of leaves) await expect(`DELETE /resource_providers/${uuid}`, api.delete(`/resource_providers/${uuid}`), [204, 404]);
    remaining = remaining.filter((provider) => !leaves.includes(provider));
  }
  const classes = await api.get('/resource_classes');
  for (const { name } of classes.body.resource_classes as { name: string }[]) {
    if (name.startsWith('CUSTOM_')) await expect(`DELETE /resource_classes/${name}`, api.delete(`/resource_classes/${encodeURIComponent(name)}`), [204, 404]);
  }
  const traits = await api.get('/traits?name=startswith:CUSTOM_');
  for (const name of traits.body.traits as string[]) await expect(`DELETE /traits/${name}`, api.delete(`/traits/${encodeURIComponent(name)}`), [204, 404]);
}
