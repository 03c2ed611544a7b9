/**
 * Every Lambda handler by the name the route table uses. The local server and
 * the function-URL router (functions/router.ts) dispatch through this map;
 * behind API Gateway each module is bundled on its own.
 */
import type { PlacementHandler } from '../shared/http/types.js';
import type { HandlerName } from '../shared/http/routes.js';
import { handler as aggregates } from './aggregates.js';
import { handler as allocationCandidates } from './allocation-candidates.js';
import { handler as allocations } from './allocations.js';
import { handler as health } from './health.js';
import { handler as history } from './history.js';
import { handler as inventories } from './inventories.js';
import { handler as reshaper } from './reshaper.js';
import { handler as resourceClasses } from './resource-classes.js';
import { handler as resourceProviders } from './resource-providers.js';
import { handler as root } from './root.js';
import { handler as traits } from './traits.js';
import { handler as upgrade } from './upgrade.js';
import { handler as usages } from './usages.js';

export const handlers: Record<HandlerName, PlacementHandler> = {
  root,
  'resource-providers': resourceProviders,
  inventories,
  aggregates,
  traits,
  'resource-classes': resourceClasses,
  allocations,
  usages,
  'allocation-candidates': allocationCandidates,
  reshaper,
  upgrade,
  history,
  health,
};
