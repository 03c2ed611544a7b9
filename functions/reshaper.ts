/** POST /reshaper: reshaping arrives with issue 3; until then 501. */
import { HttpError } from '../shared/http/errors.js';
import { lambdaHandler, type Operations } from '../shared/http/lambda.js';

export const operations: Operations = {
  'POST /reshaper': async () => {
    throw new HttpError(501, 'POST /reshaper is not implemented yet.');
  },
};

export const handler = lambdaHandler(operations);
