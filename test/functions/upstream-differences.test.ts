/**
 * Answers the differential tester (scripts/difftest) found to differ from
 * upstream Placement 8.0, each checked here as upstream gives it.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useLocalService } from '../support/local-service.js';
import { PlacementClient } from '../../admin/placement-client.js';

const service = useLocalService();
const placement = () => new PlacementClient(service.url, { version: '1.39' });

describe('answers as upstream where they once differed', () => {
  it('writes allocation_ratio as the float upstream holds (16.0, 1.5, 1.0), byte for byte as upstream answers', async () => {
    const uuid = randomUUID();
    await placement().post('/resource_providers', { name: `ratio-${uuid}`, uuid });
    const inventories = {
      VCPU: { total: 64, max_unit: 64, allocation_ratio: 16 },
      MEMORY_MB: { total: 524288, reserved: 512, max_unit: 524288, allocation_ratio: 1.5 },
      DISK_GB: { total: 4000, max_unit: 4000 },
    };
    const put = await placement().put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories });
    // Upstream 8.0's answer to the same PUT (nova's report client sends it so; recorded against ../shared/reference).
    const upstream =
      '{"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 64, "reserved": 0, "min_unit": 1, "max_unit": 64, "step_size": 1, "allocation_ratio": 16.0}, ' +
      '"MEMORY_MB": {"total": 524288, "reserved": 512, "min_unit": 1, "max_unit": 524288, "step_size": 1, "allocation_ratio": 1.5}, ' +
      '"DISK_GB": {"total": 4000, "reserved": 0, "min_unit": 1, "max_unit": 4000, "step_size": 1, "allocation_ratio": 1.0}}}';
    expect(put.text).toBe(upstream);
    expect((await placement().get(`/resource_providers/${uuid}/inventories`)).text).toBe(upstream);
    const one = await placement().get(`/resource_providers/${uuid}/inventories/VCPU`);
    expect(one.text).toBe(
      '{"total": 64, "reserved": 0, "min_unit": 1, "max_unit": 64, "step_size": 1, "allocation_ratio": 16.0, "resource_provider_generation": 1}',
    );
  });

  it('refuses a provider with an empty name, writing nothing', async () => {
    const uuid = randomUUID();
    const refused = await placement().post('/resource_providers', { name: '', uuid });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].detail).toContain(`Unable to create resource provider "", ${uuid}: Object action create failed because: name is required`);
    expect((await placement().get(`/resource_providers/${uuid}`)).status).toBe(404);
  });

  it("lists by member_of the providers in the aggregate themselves, not their root's children", async () => {
    const [root, child, aggregate] = [randomUUID(), randomUUID(), randomUUID()];
    await placement().post('/resource_providers', { name: `agg-root-${root}`, uuid: root });
    await placement().post('/resource_providers', { name: `agg-child-${child}`, uuid: child, parent_provider_uuid: root });
    expect((await placement().put(`/resource_providers/${root}/aggregates`, { aggregates: [aggregate], resource_provider_generation: 0 })).status).toBe(200);
    const listed = await placement().get(`/resource_providers?member_of=${aggregate}`);
    expect(listed.body.resource_providers.map((provider: { uuid: string }) => provider.uuid)).toEqual([root]);
  });

  it('lists every provider for an empty name filter', async () => {
    const uuid = randomUUID();
    await placement().post('/resource_providers', { name: `empty-filter-${uuid}`, uuid });
    const listed = await placement().get('/resource_providers?name=');
    expect(listed.status).toBe(200);
    expect(listed.body.resource_providers.map((provider: { uuid: string }) => provider.uuid)).toContain(uuid);
  });

  it('lists nothing rather than refusing an unknown forbidden trait when no provider has the required ones', async () => {
    const uuid = randomUUID();
    await placement().post('/resource_providers', { name: `lazy-${uuid}`, uuid });
    const empty = await placement().get('/resource_providers?required=HW_CPU_X86_AVX512VNNI,!CUSTOM_NOT_A_TRAIT');
    expect(empty.status).toBe(200);
    expect(empty.body.resource_providers).toEqual([]);
    const refused = await placement().get('/resource_providers?required=CUSTOM_NOT_A_TRAIT');
    expect(refused.status).toBe(400);
    expect((await placement().get(`/resource_providers?in_tree=${randomUUID()}&resources=CUSTOM_NOT_A_CLASS:1`)).body.resource_providers).toEqual([]);
  });

  it('sends no last-modified when updating a child never changed since its creation, and one afterwards', async () => {
    const [root, child] = [randomUUID(), randomUUID()];
    await placement().post('/resource_providers', { name: `lm-root-${root}`, uuid: root });
    await placement().post('/resource_providers', { name: `lm-child-${child}`, uuid: child, parent_provider_uuid: root });
    // Aggregates before 1.19 live apart from the provider upstream: they change neither its generation nor its update time.
    const aggregates = await placement().put(`/resource_providers/${child}/aggregates`, [randomUUID()], { version: '1.1' });
    expect(aggregates.status).toBe(200);
    // The same name and parent again: upstream's database writes nothing, so the child stays never updated.
    const unchanged = await placement().put(`/resource_providers/${child}`, { name: `lm-child-${child}`, parent_provider_uuid: root });
    expect(unchanged.status).toBe(200);
    expect(unchanged.headers.has('last-modified')).toBe(false);
    const first = await placement().put(`/resource_providers/${child}`, { name: `lm-renamed-${child}` });
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-cache');
    expect(first.headers.has('last-modified')).toBe(false);
    const second = await placement().put(`/resource_providers/${child}`, { name: `lm-again-${child}` });
    expect(second.headers.has('last-modified')).toBe(true);
    expect((await placement().put(`/resource_providers/${root}`, { name: `lm-root-renamed-${root}` })).headers.has('last-modified')).toBe(true);
  });

  it('serves the version document whatever the Accept header', async () => {
    const answer = await placement().get('/', { headers: { accept: 'application/xml' } });
    expect(answer.status).toBe(200);
    expect(answer.body.versions[0].max_version).toBe('1.39');
  });

  it('refuses a JSON content type in other case with 415 before reading the body or generations', async () => {
    const uuid = randomUUID();
    const headers = { 'content-type': 'application/JSON' };
    const created = await placement().request('POST', '/resource_providers', { rawBody: JSON.stringify({ name: `ct-${uuid}`, uuid }), headers });
    expect(created.status).toBe(415);
    expect(created.body.errors[0].detail).toContain('The media type application/JSON is not supported, use application/json');
    expect((await placement().get(`/resource_providers/${uuid}`)).status).toBe(404);
    const claim = await placement().request('PUT', `/allocations/${uuid}`, { rawBody: '{"allocations": {}}', headers });
    expect(claim.status).toBe(415);
  });

  it('answers PUT of one inventory of an unknown class with 404 and no vary header', async () => {
    const uuid = randomUUID();
    await placement().post('/resource_providers', { name: `unknown-class-${uuid}`, uuid });
    const answer = await placement().put(`/resource_providers/${uuid}/inventories/CUSTOM_NOT_THERE`, { resource_provider_generation: 0, total: 4 });
    expect(answer.status).toBe(404);
    expect(answer.body.errors[0].detail).toContain('No such resource class CUSTOM_NOT_THERE.');
    expect(answer.headers.has('vary')).toBe(false);
  });

  it('answers a resource amount past 2^53 with no candidates rather than a server error', async () => {
    const answer = await placement().get('/allocation_candidates?resources=VCPU:100000000000000000000');
    expect(answer.status).toBe(200);
    expect(answer.body.allocation_requests).toEqual([]);
  });

  it("applies root_required before looking up a group's unknown names: no root passing it gives an empty answer", async () => {
    const [root, child, trait] = [randomUUID(), randomUUID(), `CUSTOM_ROOTLESS_${randomUUID().slice(0, 8).toUpperCase()}`];
    const unknownTrait = `CUSTOM_NO_SUCH_${randomUUID().slice(0, 8).toUpperCase()}`;
    expect((await placement().request('PUT', `/traits/${trait}`)).status).toBe(201);
    await placement().post('/resource_providers', { name: `rootless-${root}`, uuid: root });
    await placement().post('/resource_providers', { name: `rootless-child-${child}`, uuid: child, parent_provider_uuid: root });
    expect((await placement().put(`/resource_providers/${child}/traits`, { traits: [trait], resource_provider_generation: 0 })).status).toBe(200);
    const candidates = (query: string) => placement().get(`/allocation_candidates?${query}`);
    // Only a child has the trait: no root passes root_required, so neither the unknown trait nor the unknown class is looked up.
    for (const query of [`resources=DISK_GB:1&required=${unknownTrait}&root_required=${trait}`, `resources=CUSTOM_NOT_A_CLASS:1&root_required=${trait}`]) {
      const empty = await candidates(query);
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ allocation_requests: [], provider_summaries: {} });
    }
    const refused = await candidates(`resources=DISK_GB:1&required=${unknownTrait}&root_required=!${trait}`);
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].detail).toContain(`No such trait(s): ${unknownTrait}.`);
    expect((await placement().put(`/resource_providers/${root}/traits`, { traits: [trait], resource_provider_generation: 0 })).status).toBe(200);
    expect((await candidates(`resources=DISK_GB:1&required=${unknownTrait}&root_required=${trait}`)).status).toBe(400);
  });

  it('lets a sharing provider with a parent share its disk with another tree (upstream answers 500)', async () => {
    const [root, pool, host, aggregate] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await placement().post('/resource_providers', { name: `pool-root-${root}`, uuid: root });
    await placement().post('/resource_providers', { name: `pool-${pool}`, uuid: pool, parent_provider_uuid: root });
    await placement().post('/resource_providers', { name: `pool-host-${host}`, uuid: host });
    await placement().put(`/resource_providers/${pool}/inventories`, { resource_provider_generation: 0, inventories: { DISK_GB: { total: 100 } } });
    await placement().put(`/resource_providers/${host}/inventories`, {
      resource_provider_generation: 0,
      inventories: { MEMORY_MB: { total: 4096 } },
    });
    await placement().put(`/resource_providers/${pool}/traits`, { resource_provider_generation: 1, traits: ['MISC_SHARES_VIA_AGGREGATE'] });
    await placement().put(`/resource_providers/${pool}/aggregates`, { resource_provider_generation: 2, aggregates: [aggregate] });
    await placement().put(`/resource_providers/${host}/aggregates`, { resource_provider_generation: 1, aggregates: [aggregate] });
    const answer = await placement().get(`/allocation_candidates?resources=MEMORY_MB:1024,DISK_GB:20&member_of=${aggregate}`);
    expect(answer.status).toBe(200);
    expect(answer.body.allocation_requests).toEqual([
      {
        allocations: { [host]: { resources: { MEMORY_MB: 1024 } }, [pool]: { resources: { DISK_GB: 20 } } },
        mappings: { '': [host, pool] },
      },
    ]);
  });

  it('summarises before 1.29, with limit, what candidates left out use in the returned trees', async () => {
    // Tree A holds a sharing provider S (shared with C through an aggregate): A and S each make a candidate.
    const [a, s, c, aggregate] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const resourceClass = `CUSTOM_LIMIT_${a.slice(0, 8).toUpperCase()}`;
    expect((await placement().put(`/resource_classes/${resourceClass}`, undefined)).status).toBe(201);
    const stocked = { resource_provider_generation: 0, inventories: { [resourceClass]: { total: 100 } } };
    await placement().post('/resource_providers', { name: `limit-a-${a}`, uuid: a });
    await placement().put(`/resource_providers/${a}/inventories`, stocked);
    await placement().post('/resource_providers', { name: `limit-s-${s}`, uuid: s, parent_provider_uuid: a });
    await placement().put(`/resource_providers/${s}/inventories`, stocked);
    await placement().put(`/resource_providers/${s}/traits`, { traits: ['MISC_SHARES_VIA_AGGREGATE'], resource_provider_generation: 1 });
    await placement().put(`/resource_providers/${s}/aggregates`, { aggregates: [aggregate], resource_provider_generation: 2 });
    await placement().post('/resource_providers', { name: `limit-c-${c}`, uuid: c });
    await placement().put(`/resource_providers/${c}/aggregates`, { aggregates: [aggregate], resource_provider_generation: 0 });
    for (const version of ['1.18', '1.28', '1.29']) {
      const all = await placement().get(`/allocation_candidates?resources=${resourceClass}:10`, { version });
      expect(all.body.allocation_requests).toHaveLength(2);
      const limited = await placement().get(`/allocation_candidates?resources=${resourceClass}:10&limit=1`, { version });
      expect(limited.body.allocation_requests).toHaveLength(1);
      expect(Object.keys(limited.body.provider_summaries).sort()).toEqual([a, s].sort());
    }
  });

  it('takes an allocation ratio of 9e18 and hands out what it allows', async () => {
    const [uuid, consumer] = [randomUUID(), randomUUID()];
    await placement().post('/resource_providers', { name: `huge-ratio-${uuid}`, uuid });
    const inventory = { resource_provider_generation: 0, resource_class: 'DISK_GB', total: 8, allocation_ratio: 9223372036854776000 };
    const created = await placement().post(`/resource_providers/${uuid}/inventories`, inventory, { version: '1.0' });
    expect(created.status).toBe(201);
    expect(created.body.allocation_ratio).toBe(9223372036854776000);
    const candidates = await placement().get(`/allocation_candidates?resources=DISK_GB:20&in_tree=${uuid}`);
    expect(candidates.body.provider_summaries[uuid].resources.DISK_GB).toEqual({ capacity: 73786976294838210000, used: 0 });
    const claim = {
      allocations: { [uuid]: { resources: { DISK_GB: 20 } } },
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    };
    expect((await placement().put(`/allocations/${consumer}`, claim)).status).toBe(204);
    expect((await placement().get(`/resource_providers/${uuid}/usages`)).body.usages).toEqual({ DISK_GB: 20 });
  });

  it('names the first unknown trait of a provider listing, not every one', async () => {
    const named = async (required: string) =>
      (await placement().get(`/resource_providers?required=${required}`)).body.errors[0].detail.split('\n\n ')[1].trim();
    expect(await named('CUSTOM_NOT_X1,CUSTOM_NOT_X2')).toBe('Invalid trait(s) in "required" parameter: No such trait(s): CUSTOM_NOT_X1.');
    expect(await named('CUSTOM_NOT_X2,CUSTOM_NOT_X1')).toBe('Invalid trait(s) in "required" parameter: No such trait(s): CUSTOM_NOT_X2.');
  });

  it('answers a negative microversion with 406 and the supported range', async () => {
    const answer = await placement().get('/resource_providers', { version: null, headers: { 'openstack-api-version': 'placement -1.0' } });
    expect(answer.status).toBe(406);
    expect(answer.body.errors[0]).toMatchObject({ max_version: '1.39', min_version: '1.0' });
  });
});
