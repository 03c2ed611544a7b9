/**
 * Keystone's validations of tokens, shared by every instance of the service
 * (items/token-validation.ts). A cache, not Placement's state: written with a
 * plain put, outside the journal and any transaction, and read eventually
 * consistent (a validation written a moment ago and not yet seen only costs
 * one more question to Keystone).
 */
import { putItem, tableName } from './dynamodb.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from './consumed-capacity.js';
import { getItem } from './reads.js';
import { decodeTokenValidation, encodeTokenValidation, tokenValidationKey, type TokenValidation } from './items/token-validation.js';

export type { TokenValidation } from './items/token-validation.js';

export async function getTokenValidation(digest: string): Promise<TokenValidation | undefined> {
  const item = await getItem(tokenValidationKey(digest), { consistent: false });
  return item && decodeTokenValidation(item);
}

export async function putTokenValidation(digest: string, validation: TokenValidation): Promise<void> {
  const output = await putItem({ TableName: tableName(), Item: encodeTokenValidation(digest, validation), ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY });
  recordConsumedCapacity(output.ConsumedCapacity, 'write');
}
