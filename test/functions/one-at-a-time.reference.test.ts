/**
 * The requests nova's clients rarely send but operators and older tools do:
 * one inventory at a time (POST, GET, PUT and DELETE of
 * /resource_providers/{uuid}/inventories/{class}) and resource classes by
 * name across the microversions that changed them (rename at 1.2, create
 * or keep at 1.7), errors included. One script sent to this service and to
 * the real upstream Placement: the same statuses, bodies and error details.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlacementClient, type ApiResponse } from '../../admin/placement-client.js';
import { useLocalService } from '../support/local-service.js';
import { startReference, type Reference } from '../support/reference.js';

const service = useLocalService();
let reference: Reference | undefined;
let skipReason: string | undefined;

beforeAll(async () => {
  ({ reference, reason: skipReason } = await startReference());
}, 600_000);
afterAll(async () => reference?.stop());

const provider = randomUUID();
const CLASS = `CUSTOM_ONE_${randomUUID().slice(0, 8).toUpperCase()}`;
const RENAMED = `${CLASS}_RENAMED`;
const inventory = (resourceClass: string) => `/resource_providers/${provider}/inventories/${resourceClass}`;

/**
 * [microversion, method, path, body, 'status only']: each request in turn, the generations as a fresh provider has
 * them. 'status only' where upstream's detail is its database's own error text (SQLite's here, MySQL's in a region).
 */
const SCRIPT: [string, string, string, unknown?, 'status only'?][] = [
  ['1.39', 'POST', '/resource_providers', { name: `one-at-a-time-${provider}`, uuid: provider }],
  // One inventory at a time.
  ['1.0', 'POST', `/resource_providers/${provider}/inventories`, { resource_class: 'VCPU', total: 8 }],
  ['1.0', 'POST', `/resource_providers/${provider}/inventories`, { resource_class: 'VCPU', total: 8 }, 'status only'],
  ['1.0', 'POST', `/resource_providers/${provider}/inventories`, { resource_class: 'CUSTOM_NOT_THERE', total: 8 }],
  ['1.0', 'POST', `/resource_providers/${provider}/inventories`, { resource_class: 'DISK_GB', total: 8, reserved: 9 }],
  ['1.26', 'POST', `/resource_providers/${provider}/inventories`, { resource_class: 'DISK_GB', total: 100, reserved: 100 }],
  ['1.15', 'POST', `/resource_providers/${provider}/inventories`, { resource_class: 'MEMORY_MB', total: 4096 }],
  ['1.0', 'POST', `/resource_providers/${randomUUID()}/inventories`, { resource_class: 'VCPU', total: 8 }],
  ['1.39', 'GET', inventory('VCPU')],
  ['1.39', 'GET', inventory('IPV4_ADDRESS')],
  ['1.39', 'GET', `/resource_providers/${randomUUID()}/inventories/VCPU`],
  ['1.39', 'PUT', inventory('VCPU'), { resource_provider_generation: 3, total: 16, allocation_ratio: 2 }],
  ['1.39', 'PUT', inventory('VCPU'), { resource_provider_generation: 3, total: 16 }],
  ['1.39', 'PUT', inventory('VCPU'), { resource_provider_generation: 4, total: 16, reserved: 17 }],
  ['1.39', 'PUT', inventory('IPV4_ADDRESS'), { resource_provider_generation: 4, total: 16 }],
  ['1.39', 'PUT', inventory('CUSTOM_NOT_THERE'), { resource_provider_generation: 4, total: 16 }],
  [
    '1.39',
    'PUT',
    `/allocations/${provider}`,
    { allocations: { [provider]: { resources: { VCPU: 2 } } }, project_id: 'p', user_id: 'u', consumer_generation: null },
  ],
  ['1.39', 'DELETE', inventory('VCPU')],
  ['1.39', 'DELETE', inventory('IPV4_ADDRESS')],
  ['1.39', 'DELETE', inventory('CUSTOM_NOT_THERE')],
  ['1.39', 'DELETE', inventory('MEMORY_MB')],
  ['1.39', 'GET', `/resource_providers/${provider}/inventories`],
  ['1.4', 'DELETE', `/resource_providers/${provider}/inventories`],
  ['1.39', 'DELETE', `/resource_providers/${provider}/inventories`],
  ['1.39', 'DELETE', `/allocations/${provider}`],
  ['1.39', 'DELETE', `/resource_providers/${provider}/inventories`],
  ['1.39', 'GET', `/resource_providers/${provider}/inventories`],
  // Resource classes by name.
  ['1.2', 'POST', '/resource_classes', { name: CLASS }],
  ['1.2', 'POST', '/resource_classes', { name: CLASS }],
  ['1.2', 'GET', `/resource_classes/${CLASS}`],
  ['1.2', 'GET', '/resource_classes/CUSTOM_NOT_THERE'],
  ['1.2', 'PUT', `/resource_classes/${CLASS}`, { name: RENAMED }],
  ['1.2', 'PUT', '/resource_classes/VCPU', { name: 'CUSTOM_VCPU' }],
  ['1.2', 'PUT', `/resource_classes/${RENAMED}`, { name: 'VCPU' }],
  ['1.2', 'PUT', '/resource_classes/CUSTOM_NOT_THERE', { name: `${CLASS}_X` }],
  ['1.7', 'PUT', `/resource_classes/${CLASS}`],
  ['1.7', 'PUT', `/resource_classes/${CLASS}`],
  ['1.7', 'PUT', '/resource_classes/VCPU'],
  ['1.7', 'PUT', '/resource_classes/NOT_CUSTOM'],
  ['1.39', 'DELETE', '/resource_classes/VCPU'],
  ['1.39', 'DELETE', '/resource_classes/CUSTOM_NOT_THERE'],
  ['1.39', 'DELETE', `/resource_classes/${CLASS}`],
  ['1.39', 'DELETE', `/resource_classes/${RENAMED}`],
  ['1.39', 'GET', `/resource_classes/${RENAMED}`],
];

/** What must be the same: the status, and the body without what differs by nature (request ids, times). */
function comparable(response: ApiResponse) {
  const body = response.body as Record<string, any> | undefined;
  if (body?.errors)
    return { status: response.status, errors: body.errors.map(({ status, code, detail }: Record<string, unknown>) => ({ status, code, detail })) };
  return { status: response.status, body: response.text === '' ? '' : body, location: response.headers.get('location')?.replace(/^https?:\/\/[^/]+/, '') };
}

describe('one inventory at a time, resource classes by name: as upstream answers them', () => {
  it('answers the whole script as upstream does', async (context) => {
    if (reference === undefined) return context.skip(skipReason);
    const clients = [new PlacementClient(service.url), new PlacementClient(reference.url)];
    for (const [version, method, path, body, statusOnly] of SCRIPT) {
      const [ours, theirs] = await Promise.all(clients.map((client) => client.request(method, path, { json: body, version })));
      const what = `${method} ${path} at ${version}: ours ${ours!.text}, upstream ${theirs!.text}`;
      if (statusOnly) expect(ours!.status, what).toBe(theirs!.status);
      else expect(comparable(ours!), what).toEqual(comparable(theirs!));
    }
  });
});
