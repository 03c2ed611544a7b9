/** Rules for provider trees: walking up one, and moving a provider within or between trees (re-parenting, 1.37). Pure. */
import type { Provider } from './model.js';

/**
 * The most providers a walk up a tree passes. Real trees are a handful of
 * levels deep (a compute node, its NUMA cells, their devices); the bound,
 * with the loop check, keeps a damaged tree from holding a request, and a
 * move is conditioned on every level above its new parent, which must fit
 * one transaction.
 */
export const MAX_TREE_DEPTH = 50;

/** A provider as POST /resource_providers creates it: generation 0, holding nothing, in its parent's tree or the root of its own. */
export function newProvider(uuid: string, name: string, parent: Pick<Provider, 'uuid' | 'rootUuid'> | undefined, now: string): Provider {
  return {
    uuid,
    name,
    generation: 0,
    parentUuid: parent?.uuid ?? null,
    rootUuid: parent?.rootUuid ?? uuid,
    inventories: {},
    usages: {},
    traits: [],
    aggregates: [],
    children: [],
    createdAt: now,
    updatedAt: now,
  };
}

type Link = Pick<Provider, 'uuid' | 'parentUuid'>;

/**
 * Where a walk up a tree goes after `path` (the providers it passed, the
 * first where it started): the parent of the last one, null past the root,
 * or 'damaged' when the walk came round to a provider it passed (a loop) or
 * passed MAX_TREE_DEPTH providers.
 */
export function nextAncestor(path: readonly Link[]): string | null | 'damaged' {
  const parent = path.at(-1)?.parentUuid ?? null;
  if (parent === null) return null;
  if (path.length >= MAX_TREE_DEPTH || path.some((passed) => passed.uuid === parent)) return 'damaged';
  return parent;
}

/** `uuid` and the providers above it, looked up in `providers`; the walk ends at a root, at a provider it cannot find, or where the tree is damaged. */
export function ancestry(uuid: string, providers: ReadonlyMap<string, Link>): string[] {
  const path: Link[] = [];
  for (let next: string | null | 'damaged' = uuid; next !== null && next !== 'damaged'; next = nextAncestor(path)) {
    const provider = providers.get(next);
    if (provider === undefined) return [...path.map((passed) => passed.uuid), next];
    path.push(provider);
  }
  return path.map((passed) => passed.uuid);
}

/** A new parent and the providers above it, as a strongly consistent walk up its tree read them. */
export interface Lineage {
  /** The new parent first, its root last; empty when the parent does not exist. */
  providers: Provider[];
  /** The walk met a loop or went deeper than MAX_TREE_DEPTH. */
  damaged: boolean;
}

export interface ParentProblem {
  /** Upstream reports a missing parent as a failed "create" even on update. */
  action: 'create' | 'update';
  reason: string;
}

/**
 * Why `provider` may not take `newParentUuid` as parent (null: become a
 * root), or undefined when it may. `lineage` is the new parent's.
 */
export function checkNewParent(provider: Provider, newParentUuid: string | null, lineage: Lineage, allowReparenting: boolean): ParentProblem | undefined {
  if (newParentUuid === null) {
    if (provider.parentUuid !== null && !allowReparenting) {
      return { action: 'update', reason: 'un-parenting a provider is not currently allowed.' };
    }
    return undefined;
  }
  if (lineage.providers.length === 0) return { action: 'create', reason: 'parent provider UUID does not exist.' };
  if (provider.parentUuid !== null && provider.parentUuid !== newParentUuid && !allowReparenting) {
    return { action: 'update', reason: 're-parenting a provider is not currently allowed.' };
  }
  // A damaged tree above the new parent is refused like a loop: nothing safe can hang from it.
  if (lineage.damaged || lineage.providers.some((above) => above.uuid === provider.uuid)) {
    return { action: 'update', reason: 'creating loop in the provider tree is not allowed.' };
  }
  return undefined;
}
