/**
 * The token validation item: Keystone's answer about one token, shared by
 * every instance of the service until it lapses (shared/auth/keystone.ts),
 * so that Keystone is asked once per token rather than once per token and
 * instance. Keyed by the token's SHA-256, never by the token.
 *
 *   pk TOKEN#<sha256 of the token>   sk TOKEN   expiresAt (TTL)
 */
import type { Identity } from '../../domain/policy.js';
import { numberField, optionalStringField, stringField, stringListField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { TTL_ATTRIBUTE } from '../table-definition.js';

export const TOKEN_VALIDATION_TYPE = 'tokenValidation';

const TokenValidationAttribute = {
  userId: 'userId',
  projectId: 'projectId',
  roles: 'roles',
  systemScope: 'systemScope',
  domainId: 'domainId',
  /** Until when (ms since the epoch) the validation may be believed. */
  validUntil: 'validUntil',
  /** When the table's TTL may remove it (seconds since the epoch). */
  expiresAt: TTL_ATTRIBUTE,
} as const;
const A = TokenValidationAttribute;

export interface TokenValidation {
  identity: Identity;
  validUntil: number;
}

export const tokenValidationKey = (digest: string): Key => ({ pk: `TOKEN#${digest}`, sk: 'TOKEN' });

export const encodeTokenValidation = (digest: string, { identity, validUntil }: TokenValidation): Item => ({
  ...tokenValidationKey(digest),
  [TYPE_ATTRIBUTE]: TOKEN_VALIDATION_TYPE,
  [A.userId]: identity.userId,
  [A.projectId]: identity.projectId,
  [A.roles]: identity.roles,
  [A.systemScope]: identity.systemScope,
  [A.domainId]: identity.domainId,
  [A.validUntil]: validUntil,
  [A.expiresAt]: Math.ceil(validUntil / 1000),
});

export const decodeTokenValidation = (item: Item): TokenValidation => ({
  identity: {
    userId: stringField(item, A.userId),
    projectId: optionalStringField(item, A.projectId),
    roles: stringListField(item, A.roles),
    systemScope: optionalStringField(item, A.systemScope),
    domainId: optionalStringField(item, A.domainId),
  },
  validUntil: numberField(item, A.validUntil),
});
