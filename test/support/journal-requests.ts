/**
 * The DynamoDB requests of each step of a multi-step change
 * (shared/storage/commit/journal.ts), as the fault proxy sees them, so that a test
 * can hold one back or make DynamoDB fail from it on. Fences and applied
 * writes go up to 100 a transaction: those kinds count the actions of a
 * request, so that "the 200th fence" is the request that carries it.
 */
import type { RequestMatcher } from '../../scripts/lib/dynamodb-fault-proxy.js';

type Request = Record<string, any>;
/** How many of a request's actions are of the kind (a single request: 1 or 0). */
type Kind = (operation: string, request: Request) => number | boolean;

/** The actions of a request: a transaction's, or the request itself as one action of its operation. */
const actionsOf = (operation: string, request: Request): [string, Request][] =>
  operation === 'TransactWriteItems'
    ? (request.TransactItems as Request[]).map((action) => {
        const [kind, body] = Object.entries(action)[0]!;
        return [`${kind}Item`, body as Request];
      })
    : [[operation, request]];

const counting =
  (matches: (operation: string, action: Request) => boolean): Kind =>
  (operation, request) =>
    actionsOf(operation, request).filter(([kind, action]) => matches(kind, action)).length;

export const isStaging = (operation: string, request: Request) =>
  operation === 'BatchWriteItem' &&
  Object.values(request.RequestItems as Record<string, Request[]>)
    .flat()
    .some((write) => String(write.PutRequest?.Item?.pk?.S).startsWith('CHANGE#'));
export const isFence = counting((operation, action) => operation === 'UpdateItem' && action.UpdateExpression === 'SET #fence = :fenceChange');
export const isCommit = (operation: string, request: Request) => operation === 'UpdateItem' && request.ExpressionAttributeValues?.[':to']?.S === 'committed';
export const isApply = counting(
  (operation, action) => ['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation) && action.ConditionExpression === '#fence = :fenceChange',
);
export const isFinish = (operation: string, request: Request) => operation === 'UpdateItem' && String(request.UpdateExpression).includes('#finished');

/** The request that carries the `count`th action of a kind. */
export function nth(count: number, kind: Kind): RequestMatcher {
  let seen = 0;
  return (operation: string, request: Request) => {
    const before = seen;
    seen += Number(kind(operation, request));
    return before < count && seen >= count;
  };
}
