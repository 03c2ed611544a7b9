/** Inventories of a resource provider: list, show, create one, replace all, update one, delete one, delete all. */
import { badRequest, conflict, ErrorCode, HttpError, notFound, objectNotFound } from '../shared/api/errors.js';
import { dumpPythonJson } from '../shared/api/python-json.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import { logger } from '../shared/http/logger.js';
import type { PlacementRequest } from '../shared/http/request.js';
import { entryOf, type Inventories, type Provider } from '../shared/domain/model.js';
import {
  capacityProblem,
  classesInUse,
  diffInventories,
  firstCapacityProblem,
  inUseMessage,
  inventoryWithDefaults,
  inventoriesFromRecords,
  overCapacityClasses,
  replacementProblem,
  serializeInventories,
  serializeInventory,
  withInventories,
  type InventoryFields,
} from '../shared/domain/inventory.js';
import { isStandardResourceClass } from '../shared/domain/standard-catalog.js';
import { isCustomName } from '../shared/domain/catalog-names.js';
import * as schemas from '../shared/schemas/inventory.js';
import { providerChangeWrites, type ProviderChangeErrors } from '../shared/storage/providers.js';
import { resourceClasses } from '../shared/storage/catalog.js';
import { readPlanCommit } from '../shared/storage/commit/transaction.js';
import { loadProvider } from '../shared/http/provider-lookup.js';

const noSuchClass = (name: string) => `No such resource class ${name}.`;

/** Whether the resource class exists, standard or custom (one read of the catalog for a custom one). */
const classExists = async (name: string): Promise<boolean> => (await resourceClasses.missing([name])).length === 0;

/** The first class that cannot exist whatever the catalog holds (neither standard nor custom). */
function firstImpossibleClass(names: Iterable<string>): string | undefined {
  for (const name of names) if (!isStandardResourceClass(name) && !isCustomName(name)) return name;
  return undefined;
}

const reservedMayEqualTotal = (request: PlacementRequest) => request.isAtLeast('1.26');

function checkGeneration(provider: Provider, generation: number): void {
  if (generation !== provider.generation) throw conflict('resource provider generation conflict', ErrorCode.CONCURRENT_UPDATE);
}

/** Upstream only warns when a change leaves usage above capacity. */
function warnOverCapacity(provider: Provider, inventories: Inventories): void {
  for (const resourceClass of overCapacityClasses(inventories, provider.usages)) {
    logger.warn(`Resource provider ${provider.uuid} is now over-capacity for ${resourceClass}`);
  }
}

const cacheHeaders = (request: PlacementRequest): Record<string, string> => (request.isAtLeast('1.15') ? { 'cache-control': 'no-cache' } : {});

interface ChangeOptions {
  /** The generation the client sent: a fresh read must still have it. */
  generation?: number;
  errors?: ProviderChangeErrors;
}

/**
 * Writes the provider with the inventories `next` builds from it. Storage
 * refuses the write when the provider (its generation or its usage) changed
 * since it was read; then it is read again and `next` runs again on the
 * fresh state (which must still carry the client's generation, when one was
 * sent), as the retry policy allows before the 409.
 */
async function changeInventories(
  provider: Provider,
  next: (current: Provider) => Inventories | Promise<Inventories>,
  options: ChangeOptions = {},
): Promise<{ before: Provider; after: Provider }> {
  return readPlanCommit(async (retry) => {
    const current = retry === 0 ? provider : await loadProvider(provider.uuid);
    if (retry > 0 && options.generation !== undefined) checkGeneration(current, options.generation);
    const after = withInventories(current, await next(current), new Date().toISOString());
    return { writes: providerChangeWrites(current, after, options.errors ?? {}), result: { before: current, after } };
  });
}

async function listInventories(request: PlacementRequest): Promise<Reply> {
  const provider = await loadProvider(request.param('uuid'), ' : ');
  const hasInventory = Object.keys(provider.inventories).length > 0;
  return {
    status: 200,
    json: dumpPythonJson(serializeInventories(provider.inventories, provider.generation)),
    lastModified: hasInventory ? new Date(provider.updatedAt) : null,
  };
}

async function showInventory(request: PlacementRequest): Promise<Reply> {
  const uuid = request.param('uuid');
  const resourceClass = request.param('resource_class');
  const provider = await loadProvider(uuid, ' : ');
  const inventory = entryOf(provider.inventories, resourceClass);
  if (inventory === undefined) throw notFound(`No inventory of class ${resourceClass} for ${uuid}`);
  return { status: 200, json: dumpPythonJson(serializeInventory(inventory, provider.generation)), lastModified: new Date(provider.updatedAt) };
}

interface PostBody extends InventoryFields {
  resource_class: string;
}

async function createInventory(request: PlacementRequest): Promise<Reply> {
  const uuid = request.param('uuid');
  const provider = await loadProvider(uuid);
  const body = request.json<PostBody>(schemas.POST_INVENTORY_1_0);
  const resourceClass = body.resource_class;
  const inventory = inventoryWithDefaults(body);
  const unableToCreate = (detail: string) => badRequest(`Unable to create inventory for resource provider ${uuid}: ${detail}`);

  const problem = capacityProblem(resourceClass, uuid, inventory, reservedMayEqualTotal(request));
  if (problem !== undefined) throw unableToCreate(problem);
  if (firstImpossibleClass([resourceClass]) !== undefined) throw unableToCreate(noSuchClass(resourceClass));

  const { after } = await changeInventories(
    provider,
    (current) => {
      if (Object.hasOwn(current.inventories, resourceClass)) {
        throw conflict(`Update conflict: Inventory for '${resourceClass}' on resource provider '${uuid}' already exists.`, ErrorCode.CONCURRENT_UPDATE);
      }
      return { ...current.inventories, [resourceClass]: inventory };
    },
    { errors: { onUnknownResourceClass: (name) => unableToCreate(noSuchClass(name)) } },
  );
  return {
    status: 201,
    json: dumpPythonJson(serializeInventory(inventory, after.generation)),
    headers: { location: `${request.baseUrl}/resource_providers/${uuid}/inventories/${resourceClass}`, ...cacheHeaders(request) },
    lastModified: new Date(after.updatedAt),
  };
}

interface PutAllBody {
  resource_provider_generation: number;
  inventories: Record<string, unknown>;
}

async function replaceInventories(request: PlacementRequest): Promise<Reply> {
  const uuid = request.param('uuid');
  const provider = await loadProvider(uuid);
  const body = request.json<PutAllBody>(schemas.PUT_INVENTORIES_1_0);
  checkGeneration(provider, body.resource_provider_generation);
  const unknownClass = (name: string) => badRequest(`Unknown resource class in inventory for resource provider ${uuid}: ${noSuchClass(name)}`);

  // Records under names the schema's pattern does not cover were not validated: any that is not
  // even shaped like an inventory names a class that cannot exist.
  const inventories = inventoriesFromRecords(body.inventories, unknownClass);
  const problem = firstCapacityProblem(inventories, uuid, reservedMayEqualTotal(request));
  if (problem !== undefined) throw badRequest(`Unable to update inventory for resource provider ${uuid}: ${problem}`);

  const { before, after } = await changeInventories(
    provider,
    async (current) => {
      const { added } = diffInventories(current.inventories, inventories);
      const impossible = firstImpossibleClass(added);
      if (impossible !== undefined) throw unknownClass(impossible);
      const inUse = replacementProblem(current, inventories);
      if (inUse !== undefined) {
        // Upstream resolves every class name before it looks at allocations.
        const [unknown] = await resourceClasses.missing(added);
        if (unknown !== undefined) throw unknownClass(unknown);
        throw conflict(`update conflict: ${inUse}`, ErrorCode.INVENTORY_INUSE);
      }
      return inventories;
    },
    { generation: body.resource_provider_generation, errors: { onUnknownResourceClass: unknownClass } },
  );
  warnOverCapacity(before, inventories);
  return {
    status: 200,
    json: dumpPythonJson(serializeInventories(after.inventories, after.generation)),
    lastModified: Object.keys(inventories).length > 0 ? new Date(after.updatedAt) : null,
  };
}

type PutOneBody = InventoryFields & { resource_provider_generation: number };

async function updateInventory(request: PlacementRequest): Promise<Reply> {
  const uuid = request.param('uuid');
  const resourceClass = request.param('resource_class');
  const provider = await loadProvider(uuid);
  const body = request.json<PutOneBody>(schemas.PUT_INVENTORY_1_0);
  checkGeneration(provider, body.resource_provider_generation);
  const inventory = inventoryWithDefaults(body);

  const problem = capacityProblem(resourceClass, uuid, inventory, reservedMayEqualTotal(request));
  if (problem !== undefined) throw badRequest(`Unable to update inventory for resource provider ${uuid}: ${problem}`);
  const { before, after } = await changeInventories(
    provider,
    async (current) => {
      if (!Object.hasOwn(current.inventories, resourceClass)) {
        // Upstream's class lookup raises a NotFound that escapes the handler (no vary header).
        if (!(await classExists(resourceClass))) throw objectNotFound(noSuchClass(resourceClass));
        throw badRequest(`No inventory record with resource class for resource provider ${uuid}: No inventory of class ${resourceClass} found.`);
      }
      return { ...current.inventories, [resourceClass]: inventory };
    },
    { generation: body.resource_provider_generation },
  );
  warnOverCapacity(before, { [resourceClass]: inventory });
  return { status: 200, json: dumpPythonJson(serializeInventory(inventory, after.generation)), lastModified: new Date(after.updatedAt) };
}

async function deleteInventory(request: PlacementRequest): Promise<Reply> {
  const uuid = request.param('uuid');
  const resourceClass = request.param('resource_class');
  const provider = await loadProvider(uuid);
  const notFoundForDelete = (detail: string) => notFound(`No inventory of class ${resourceClass} found for delete: ${detail}`);
  if (!Object.hasOwn(provider.inventories, resourceClass) && !(await classExists(resourceClass))) {
    throw notFoundForDelete(noSuchClass(resourceClass));
  }
  await changeInventories(provider, (current) => {
    if (!Object.hasOwn(current.inventories, resourceClass)) throw notFoundForDelete(`No inventory of class ${resourceClass} found for delete`);
    const inUse = classesInUse(current.usages, [resourceClass]);
    if (inUse.length > 0) {
      // Upstream tags this conflict as a concurrent update, not as inventory in use.
      throw conflict(`Unable to delete inventory of class ${resourceClass}: ${inUseMessage(inUse, uuid)}`, ErrorCode.CONCURRENT_UPDATE);
    }
    const { [resourceClass]: _removed, ...rest } = current.inventories;
    return rest;
  });
  return { status: 204 };
}

async function deleteAllInventories(request: PlacementRequest): Promise<Reply> {
  const uuid = request.param('uuid');
  const provider = await loadProvider(uuid);
  await changeInventories(provider, (current) => {
    const problem = replacementProblem(current, {});
    if (problem !== undefined) throw conflict(problem, ErrorCode.INVENTORY_INUSE);
    return {};
  });
  return { status: 204 };
}

/** DELETE of all inventories arrived in 1.5; below it upstream answers 405 rather than 404. */
async function deleteAllInventoriesVersioned(request: PlacementRequest): Promise<Reply> {
  if (request.isBefore('1.5')) {
    throw new HttpError(405, '', { explanation: `The method ${request.method} is not allowed for this resource.` });
  }
  return deleteAllInventories(request);
}

const RP = '/resource_providers/{uuid}';

export const operations: Operations<'inventories'> = {
  [`GET ${RP}/inventories`]: listInventories,
  [`POST ${RP}/inventories`]: createInventory,
  [`PUT ${RP}/inventories`]: replaceInventories,
  [`DELETE ${RP}/inventories`]: deleteAllInventoriesVersioned,
  [`GET ${RP}/inventories/{resource_class}`]: showInventory,
  [`PUT ${RP}/inventories/{resource_class}`]: updateInventory,
  [`DELETE ${RP}/inventories/{resource_class}`]: deleteInventory,
};

export const handler = lambdaHandler(operations);
