/** Reads the requested microversion and echoes it on the response. */
import { requestedMicroversion } from '../../api/microversion.js';
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
  },
  after: (request: LambdaRequest) => {
    const placement = request.context.placement!;
    if (request.response) {
      request.response.headers = { ...request.response.headers, ...versionHeaders(placement, true) };
    }
  },
});
