/**
 * Authentication like upstream's noauth2 strategy: the token names the user
 * ("admin" is an admin, "user:project" sets the project), `x-roles` overrides
 * the roles, `openstack-system-scope` makes the token system scoped. The
 * version document (GET /) is public.
 */
import type middy from '@middy/core';
import { HttpError } from '../errors.js';
import type { Identity } from '../../domain/policy.js';
import type { PlacementRequest } from '../request.js';
import type { LambdaRequest } from '../lambda.js';

export function noAuthIdentity(request: PlacementRequest): Identity | undefined {
  const token = request.header('x-auth-token');
  if (token === undefined) return undefined;
  const [userId = '', ...rest] = token.split(':');
  const projectId = rest.join(':') || userId;
  const rolesHeader = request.header('x-roles');
  const roles = rolesHeader !== undefined ? rolesHeader.split(',').map((role) => role.trim()) : userId === 'admin' ? ['admin'] : [];
  const systemScope = request.header('openstack-system-scope') || undefined;
  return { userId, projectId: systemScope ? undefined : projectId, roles, systemScope };
}

export const authenticate = (): middy.MiddlewareObj => ({
  before: (request: LambdaRequest) => {
    const placement = request.context.placement!;
    if (placement.path === '/' || placement.path === '') return;
    placement.identity = noAuthIdentity(placement);
    if (placement.identity === undefined) {
      throw new HttpError(401, 'This server could not verify that you are authorized to access the document you requested.', { versioned: false });
    }
  },
}) as middy.MiddlewareObj;
