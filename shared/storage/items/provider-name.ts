/**
 * The provider name item: one per provider name, so that a transaction can
 * claim a name only if nobody holds it (upstream's unique index).
 *
 *   pk RPNAME#<name>   sk RPNAME
 */
import { stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { clientPart } from './key-parts.js';

export const PROVIDER_NAME_TYPE = 'providerName';
export const ProviderNameAttribute = { uuid: 'uuid' } as const;

export const providerNameKey = (name: string): Key => ({ pk: clientPart('RPNAME', name), sk: 'RPNAME' });

export const encodeProviderName = (name: string, uuid: string): Item => ({
  ...providerNameKey(name),
  [TYPE_ATTRIBUTE]: PROVIDER_NAME_TYPE,
  [ProviderNameAttribute.uuid]: uuid,
});

/** The uuid of the provider holding the name. */
export const decodeProviderName = (item: Item): string => stringField(item, ProviderNameAttribute.uuid);
