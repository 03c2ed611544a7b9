import { describe, expect, it } from 'vitest';
import { getTokenValidation, putTokenValidation } from '../../../shared/storage/token-validations.js';
import { decodeTokenValidation, encodeTokenValidation, TOKEN_VALIDATION_TYPE } from '../../../shared/storage/items/token-validation.js';
import { useLocalService } from '../../support/local-service.js';

useLocalService();

const validation = {
  identity: { userId: 'u1', projectId: 'p1', roles: ['reader', 'member'], systemScope: undefined, domainId: undefined },
  validUntil: 1_800_000_000_000,
};

describe('shared token validations', () => {
  it('round-trip through the item model, lapsing with the table TTL when the validation does', () => {
    const item = encodeTokenValidation('ab'.repeat(32), validation);
    expect(item).toMatchObject({ pk: `TOKEN#${'ab'.repeat(32)}`, sk: 'TOKEN', type: TOKEN_VALIDATION_TYPE, expiresAt: 1_800_000_000 });
    expect(decodeTokenValidation(item)).toEqual(validation);
    const system = { identity: { userId: 'admin', projectId: undefined, roles: ['admin'], systemScope: 'all', domainId: undefined }, validUntil: 1 };
    expect(decodeTokenValidation(encodeTokenValidation('cd', system))).toEqual(system);
  });

  it('are written and read back from the table', async () => {
    const digest = 'ef'.repeat(32);
    expect(await getTokenValidation(digest)).toBeUndefined();
    await putTokenValidation(digest, validation);
    expect(await getTokenValidation(digest)).toEqual(validation);
  });
});
