/** Rules for moving a provider within or between trees (re-parenting, 1.37). Pure. */
import type { Provider } from './model.js';

export interface ParentProblem {
  /** Upstream reports a missing parent as a failed "create" even on update. */
  action: 'create' | 'update';
  reason: string;
}

/**
 * Why `provider` may not take `newParentUuid` as parent (null: become a
 * root), or undefined when it may. `tree` is the provider's current tree.
 */
export function checkNewParent(
  provider: Provider,
  newParentUuid: string | null,
  newParent: Provider | undefined,
  tree: Provider[],
  allowReparenting: boolean,
): ParentProblem | undefined {
  if (newParentUuid === null) {
    if (provider.parentUuid !== null && !allowReparenting) {
      return { action: 'update', reason: 'un-parenting a provider is not currently allowed.' };
    }
    return undefined;
  }
  if (newParent === undefined) return { action: 'create', reason: 'parent provider UUID does not exist.' };
  if (provider.parentUuid !== null && provider.parentUuid !== newParentUuid && !allowReparenting) {
    return { action: 'update', reason: 're-parenting a provider is not currently allowed.' };
  }
  if (isInSubtree(newParentUuid, provider.uuid, tree)) {
    return { action: 'update', reason: 'creating loop in the provider tree is not allowed.' };
  }
  return undefined;
}

/** True when `candidate` is `ancestor` itself or below it in the tree. */
export function isInSubtree(candidate: string, ancestor: string, tree: Provider[]): boolean {
  const parents = new Map(tree.map((provider) => [provider.uuid, provider.parentUuid]));
  for (let current: string | null | undefined = candidate; current; current = parents.get(current)) {
    if (current === ancestor) return true;
  }
  return false;
}
