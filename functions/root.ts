/** GET /: the version document. Also answers unmatched routes (API Gateway's $default route) with 404/405. */
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations } from '../shared/http/types.js';
import { MAX_VERSION, MIN_VERSION } from '../shared/api/microversion.js';

export const operations: Operations<'root'> = {
  'GET /': async () => ({
    status: 200,
    body: {
      versions: [{ id: 'v1.0', max_version: MAX_VERSION, min_version: MIN_VERSION, status: 'CURRENT', links: [{ rel: 'self', href: '' }] }],
    },
  }),
};

export const handler = lambdaHandler(operations);
