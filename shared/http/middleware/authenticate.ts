/**
 * Establishes who is calling: from the API Gateway authorizer's context when
 * the request passed through it, otherwise by authenticating here with the
 * same module (shared/auth/authenticate.ts). The version document (GET /) is
 * public. Failures answer as upstream's auth middlewares do: noauth2's and
 * Keystone's 401, 503 when Keystone cannot be asked.
 */
import { HttpError } from '../../api/errors.js';
import { authStrategy, authenticateHeaders, checkAuthConfiguration, fromAuthorizerContext, keystone } from '../../auth/authenticate.js';
import { logger } from '../logger.js';
import type { LambdaRequest, PlacementMiddleware } from '../types.js';

function unauthenticated(): HttpError {
  if (authStrategy() === 'noauth2') return new HttpError(401, '', { versioned: false, bare: true });
  const document = { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } };
  return new HttpError(401, document.error.message, {
    versioned: false,
    bare: { document },
    headers: { 'www-authenticate': `Keystone uri="${keystone().authenticateUri}"` },
  });
}

export const authenticate = (): PlacementMiddleware => {
  // Built with the handler, so an incomplete Keystone configuration fails the start, not a request.
  checkAuthConfiguration();
  return {
    before: async (request: LambdaRequest) => {
      const placement = request.context.placement!;
      if (placement.path === '/' || placement.path === '') return;
      const outcome = fromAuthorizerContext(placement.authorizerContext) ?? (await authenticateHeaders((name) => placement.header(name)));
      switch (outcome.kind) {
        case 'valid':
          placement.identity = outcome.identity;
          return;
        case 'invalid':
          throw unauthenticated();
        case 'unavailable':
          logger.error('cannot validate token', { reason: outcome.reason });
          throw new HttpError(503, 'The Keystone service is temporarily unavailable.', { versioned: false, bare: true });
      }
    },
  };
};
