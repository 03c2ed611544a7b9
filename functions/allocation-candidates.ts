/** GET /allocation_candidates: the candidate search arrives with issue 3; until then 501. */
import { HttpError } from '../shared/http/errors.js';
import { lambdaHandler, type Operations } from '../shared/http/lambda.js';

export const operations: Operations = {
  'GET /allocation_candidates': async () => {
    throw new HttpError(501, 'GET /allocation_candidates is not implemented yet.');
  },
};

export const handler = lambdaHandler(operations);
