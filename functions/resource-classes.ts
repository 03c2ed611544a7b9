/**
 * Resource classes: list, create (POST, and PUT from 1.7), show, rename
 * (PUT with a body, 1.2–1.6) and delete. Standard classes are read-only.
 */
import { badRequest, conflict, objectNotFound } from '../shared/api/errors.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import { validateBody } from '../shared/http/validation.js';
import { latestChange, orderResourceClasses } from '../shared/domain/catalog-names.js';
import { isStandardResourceClass } from '../shared/domain/standard-catalog.js';
import * as schemas from '../shared/schemas/resource-class.js';
import { resourceClasses, type CatalogEntry } from '../shared/storage/catalog.js';
import { renameResourceClass } from '../shared/storage/resource-class-rename.js';
import { deleteUnused } from '../shared/storage/commit/count-changes.js';
import { parsePythonJson } from '../shared/api/python-json.js';

interface NameBody {
  name: string;
}

const classPath = (name: string) => `/resource_classes/${name}`;

function serialize(entry: { name: string }) {
  return { name: entry.name, links: [{ rel: 'self', href: classPath(entry.name) }] };
}

const isStandard = (entry: CatalogEntry) => entry.standard || isStandardResourceClass(entry.name);

async function loadClass(name: string): Promise<CatalogEntry> {
  const entry = await resourceClasses.get(name);
  if (entry === undefined) throw objectNotFound(`No such resource class ${name}.`);
  return entry;
}

/** Thrown by a create when the name was taken meanwhile. */
class ClassExists extends Error {}

async function listClasses(request: PlacementRequest): Promise<Reply> {
  const entries = orderResourceClasses(await resourceClasses.list());
  return {
    status: 200,
    body: { resource_classes: entries.map(serialize) },
    lastModified: request.isAtLeast('1.15') ? (latestChange(entries) ?? new Date()) : undefined,
  };
}

async function createClass(request: PlacementRequest): Promise<Reply> {
  const { name } = request.json<NameBody>(schemas.POST_RESOURCE_CLASS_1_2);
  const exists = () => conflict(`Conflicting resource class already exists: ${name}`);
  // The pattern already demands CUSTOM_; a standard name can only be taken.
  if (isStandardResourceClass(name)) throw exists();
  await resourceClasses.create(name, new Date().toISOString(), exists);
  return { status: 201, headers: { location: `${request.baseUrl}${classPath(name)}` } };
}

async function showClass(request: PlacementRequest): Promise<Reply> {
  const entry = await loadClass(request.param('name'));
  return {
    status: 200,
    body: serialize(entry),
    lastModified: request.isAtLeast('1.15') ? (latestChange([entry]) ?? new Date()) : undefined,
  };
}

/** 1.2–1.6: PUT with a body renames a custom class, in every inventory, usage and allocation that names it. */
async function renameClass(request: PlacementRequest): Promise<Reply> {
  const name = request.param('name');
  const { name: newName } = request.json<NameBody>(schemas.PUT_RESOURCE_CLASS_1_2);
  const entry = await loadClass(name);
  if (isStandard(entry)) throw badRequest(`Cannot update standard resource class ${name}`);
  if (newName !== name) {
    const exists = () => conflict(`Resource class already exists: ${newName}`);
    if (isStandardResourceClass(newName)) throw exists();
    await renameResourceClass(entry, newName, new Date().toISOString(), {
      onExists: exists,
      onMissing: () => objectNotFound(`No such resource class ${name}.`),
      onInUse: () =>
        conflict(
          `Cannot rename resource class ${name}: the class is in use in inventory, and this region may still run release 1.0.0. Finalize the upgrade (placement-admin upgrade finalize) first, or remove the inventories of ${name}.`,
        ),
    });
  }
  return { status: 200, body: serialize({ name: newName }) };
}

/**
 * 1.7+: bodiless PUT creates the class (201) or confirms it exists (204).
 * Upstream validates the name by building `{"name": "<name>"}` and checking
 * it against the body schema, so a name that breaks that JSON is "malformed".
 */
async function ensureClass(request: PlacementRequest): Promise<Reply> {
  const name = request.param('name');
  let document: unknown;
  try {
    document = parsePythonJson(`{"name": "${name}"}`);
  } catch (error) {
    throw badRequest(`Malformed JSON: ${(error as Error).message}`);
  }
  validateBody(schemas.PUT_RESOURCE_CLASS_1_2, document);
  const headers = { location: `${request.baseUrl}${classPath(name)}` };
  if ((await resourceClasses.get(name)) !== undefined) return { status: 204, headers };
  try {
    await resourceClasses.create(name, new Date().toISOString(), () => new ClassExists());
  } catch (error) {
    if (error instanceof ClassExists) return { status: 204, headers };
    throw error;
  }
  return { status: 201, headers };
}

async function updateClass(request: PlacementRequest): Promise<Reply> {
  return request.isAtLeast('1.7') ? ensureClass(request) : renameClass(request);
}

async function deleteClass(request: PlacementRequest): Promise<Reply> {
  const name = request.param('name');
  const entry = await loadClass(name);
  if (isStandard(entry)) throw badRequest(`Error in delete resource class: Cannot delete standard resource class ${name}.`);
  await deleteUnused('classes', name, () => conflict(`Error in delete resource class: Cannot delete resource class ${name}. Class is in use in inventory.`));
  return { status: 204 };
}

export const operations: Operations<'resource-classes'> = {
  'GET /resource_classes': listClasses,
  'POST /resource_classes': createClass,
  'GET /resource_classes/{name}': showClass,
  'PUT /resource_classes/{name}': updateClass,
  'DELETE /resource_classes/{name}': deleteClass,
};

export const handler = lambdaHandler(operations);
