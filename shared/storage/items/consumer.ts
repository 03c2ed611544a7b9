/**
 * The consumer item: who a consumer is (project, user, type), its
 * generation and everything it holds, by provider. In the byGroup index
 * under its project, sorted by user, for GET /usages.
 *
 *   pk CONSUMER#<uuid>   sk CONSUMER   gpk PROJECT#<project>   gsk USER#<user>#<uuid>
 */
import type { Consumer } from '../../domain/model.js';
import { boundedItem, numberField, numberMapsField, optionalStringField, stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { clientPart, SORT_PART_BYTES, uuidPart } from './key-parts.js';

export const CONSUMER_TYPE = 'consumer';

export const ConsumerAttribute = {
  uuid: 'uuid',
  projectId: 'projectId',
  userId: 'userId',
  generation: 'generation',
  /** Absent for consumers created without one (upstream reports them as "unknown"). */
  consumerType: 'consumerType',
  /** Provider uuid to the resources held there. */
  allocations: 'allocations',
  createdAt: 'createdAt',
  updatedAt: 'updatedAt',
  /** The request that wrote this version (absent on release 1.0.0's writes): the allocation history's request id. */
  requestId: 'requestId',
} as const;
const A = ConsumerAttribute;

/** The sort key of every consumer item: what the history function's stream filter lets through. */
export const CONSUMER_SK = 'CONSUMER';

export const consumerKey = (uuid: string): Key => ({ pk: uuidPart('CONSUMER', uuid), sk: CONSUMER_SK });

/** The byGroup partition of a project's consumers. */
export const projectGroup = (projectId: string): string => clientPart('PROJECT', projectId);
/** The start of the byGroup sort keys of one user's consumers. */
export const userPrefix = (userId: string): string => `${clientPart('USER', userId, SORT_PART_BYTES)}#`;

function consumerIndexKeys(uuid: string, projectId: string, userId: string) {
  return { gpk: projectGroup(projectId), gsk: `${userPrefix(userId)}${uuid}` };
}

/** The one encoder of consumer items; refuses (ItemTooLarge) a consumer past the item size bound. */
export function encodeConsumer(consumer: Consumer, requestId?: string): Item {
  const item: Item = {
    ...consumerKey(consumer.uuid),
    ...consumerIndexKeys(consumer.uuid, consumer.projectId, consumer.userId),
    [TYPE_ATTRIBUTE]: CONSUMER_TYPE,
    [A.uuid]: consumer.uuid,
    [A.projectId]: consumer.projectId,
    [A.userId]: consumer.userId,
    [A.generation]: consumer.generation,
    [A.consumerType]: consumer.consumerType,
    [A.allocations]: consumer.allocations,
    [A.createdAt]: consumer.createdAt,
    [A.updatedAt]: consumer.updatedAt,
    [A.requestId]: requestId,
  };
  return boundedItem(item, () => `Consumer ${consumer.uuid}`);
}

/** The request that wrote the item, when it said. */
export const consumerRequestId = (item: Item): string | undefined => optionalStringField(item, A.requestId);

/** The one decoder of consumer items. */
export function decodeConsumer(item: Item): Consumer {
  return {
    uuid: stringField(item, A.uuid),
    projectId: stringField(item, A.projectId),
    userId: stringField(item, A.userId),
    generation: numberField(item, A.generation),
    consumerType: optionalStringField(item, A.consumerType),
    allocations: numberMapsField(item, A.allocations),
    createdAt: stringField(item, A.createdAt),
    updatedAt: stringField(item, A.updatedAt),
  };
}
