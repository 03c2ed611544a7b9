import { describe, expect, it } from 'vitest';
import type { Consumer } from '../../../../shared/domain/model.js';
import { CONSUMER_TYPE, consumerKey, decodeConsumer, encodeConsumer, projectGroup, userPrefix } from '../../../../shared/storage/items/consumer.js';

const consumer: Consumer = {
  uuid: 'd0000000-0000-4000-8000-000000000001',
  projectId: 'project',
  userId: 'user',
  generation: 2,
  consumerType: 'INSTANCE',
  allocations: { 'a0000000-0000-4000-8000-000000000001': { VCPU: 2, MEMORY_MB: 512 } },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-02T00:00:00.000Z',
};

describe('the consumer item', () => {
  it('decodes what it encodes, with its keys, index keys and tag', () => {
    const item = encodeConsumer(consumer);
    expect(item).toMatchObject({
      ...consumerKey(consumer.uuid),
      type: CONSUMER_TYPE,
      gpk: projectGroup('project'),
      gsk: `${userPrefix('user')}${consumer.uuid}`,
    });
    expect(decodeConsumer(item)).toEqual(consumer);
  });

  it('keeps a consumer without a type without one', () => {
    expect(decodeConsumer(encodeConsumer({ ...consumer, consumerType: undefined })).consumerType).toBeUndefined();
  });

  it('keys a user id too long for a sort key by its digest', () => {
    expect(userPrefix('u'.repeat(2000))).toMatch(/^USER@[0-9a-f]{64}#$/);
  });

  it('refuses a consumer holding allocations on more providers than one record may hold', () => {
    const allocations = Object.fromEntries(Array.from({ length: 10_000 }, (_, n) => [`a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`, { VCPU: 1 }]));
    expect(() => encodeConsumer({ ...consumer, allocations })).toThrow(/^Consumer d0000000-0000-4000-8000-000000000001 would take \d+ bytes/);
  });
});
