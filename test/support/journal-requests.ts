/**
 * The DynamoDB requests of each step of a multi-step change
 * (shared/storage/journal.ts), as the fault proxy sees them, so that a test
 * can hold one back or make DynamoDB fail from it on.
 */
import type { RequestMatcher } from '../../scripts/lib/dynamodb-fault-proxy.js';

type Request = Record<string, any>;

export const isStaging = (operation: string, request: Request) =>
  operation === 'BatchWriteItem' &&
  Object.values(request.RequestItems as Record<string, Request[]>)
    .flat()
    .some((write) => String(write.PutRequest?.Item?.pk?.S).startsWith('CHANGE#'));
export const isFence = (operation: string, request: Request) => operation === 'UpdateItem' && request.UpdateExpression === 'SET #fence = :fenceChange';
export const isCommit = (operation: string, request: Request) => operation === 'UpdateItem' && request.ExpressionAttributeValues?.[':to']?.S === 'committed';
export const isApply = (operation: string, request: Request) =>
  ['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation) && request.ConditionExpression === '#fence = :fenceChange';
export const isFinish = (operation: string, request: Request) => operation === 'UpdateItem' && String(request.UpdateExpression).includes('#finished');

/** The `count`th request of a kind. */
export function nth(count: number, kind: (operation: string, request: Request) => boolean): RequestMatcher {
  let seen = 0;
  return (operation: string, request: Request) => kind(operation, request) && ++seen === count;
}
