/** Placeholder: operations of this family are being written. */
import { lambdaHandler, type Operations } from '../shared/http/lambda.js';

export const operations: Operations = {};

export const handler = lambdaHandler(operations);
