/** Reads the requested microversion, echoes it on the response and tags the request's log lines with it. */
import { requestedMicroversion } from '../../api/microversion.js';
import { logger } from '../logger.js';
import type { PlacementRequest } from '../request.js';
import type { LambdaRequest, PlacementMiddleware } from '../types.js';

export function versionHeaders(request: PlacementRequest, withVary: boolean): Record<string, string> {
  return {
    'openstack-api-version': `placement ${request.version}`,
    ...(withVary ? { vary: 'openstack-api-version' } : {}),
  };
}

export const microversion = (): PlacementMiddleware => ({
  before: (request: LambdaRequest) => {
    const placement = request.context.placement!;
    placement.version = requestedMicroversion(placement.header('openstack-api-version'));
    placement.versionKnown = true;
    logger.appendKeys({ microversion: placement.version.toString() });
  },
  after: (request: LambdaRequest) => {
    const placement = request.context.placement!;
    if (request.response) {
      request.response.headers = { ...request.response.headers, ...versionHeaders(placement, true) };
    }
  },
});
