/** Checks the route's policy rule against the caller before the handler runs. */
import { forbidden } from '../../api/errors.js';
import { policy } from '../../auth/policy-file.js';
import type { LambdaRequest, PlacementMiddleware } from '../types.js';

export const authorize = (): PlacementMiddleware => {
  // Built with the handler, so a bad policy file fails the cold start (or npm start), not a request.
  policy();
  return {
    before: (request: LambdaRequest) => {
      const placement = request.context.placement!;
      const rule = placement.match?.route.policy;
      if (rule === undefined || placement.identity === undefined) return;
      // Upstream's default target is the caller's own project; GET /usages targets the project asked about.
      const target = {
        project_id: placement.path === '/usages' ? placement.query.get('project_id') : placement.identity.projectId,
        user_id: placement.identity.userId,
      };
      if (!policy().allows(rule, placement.identity, target)) {
        throw forbidden(`Policy does not allow ${rule} to be performed.`);
      }
    },
  };
};
