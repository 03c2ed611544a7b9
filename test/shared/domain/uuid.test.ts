import { describe, expect, it } from 'vitest';
import { isUuidLike, normalizeUuid } from '../../../shared/domain/uuid.js';

const HEX = 'aabbccdd11223344556677889900aabb';
const UUID = 'aabbccdd-1122-3344-5566-77889900aabb';

describe('the uuid rule (oslo.utils is_uuid_like)', () => {
  // What the reference Placement accepts and refuses, as a consumer uuid in PUT /allocations/{uuid},
  // in member_of and in_tree, and as a provider uuid in a body: the same everywhere.
  it.each([
    UUID,
    HEX,
    HEX.toUpperCase(),
    `urn:uuid:${HEX}`,
    `uuid:${HEX}`,
    `urn:${HEX}`,
    `uuid:urn:${HEX}`,
    `{${HEX}}`,
    `{{${HEX}}}`,
    `${HEX}}`,
    'aabbccdd-11223344-5566-77889900aabb',
    `a-a-b-b-${HEX.slice(4)}`,
  ])('accepts %j', (value) => {
    expect(isUuidLike(value)).toBe(true);
    expect(normalizeUuid(value)).toBe(UUID);
  });

  it.each([`URN:UUID:${HEX}`, `aabb{${HEX.slice(4)}`, ` ${HEX}`, `${HEX}\n`, HEX.slice(1), `g${HEX.slice(1)}`, 'abc', '', 42, null, undefined])(
    'refuses %j',
    (value) => {
      expect(isUuidLike(value)).toBe(false);
    },
  );
});
