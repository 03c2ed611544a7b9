import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { handlers } from '../../../functions/index.js';
import { entryPath, handlerEntry } from '../../../infra/bundling.js';
import { HANDLER_FAMILIES } from '../../../infra/settings.js';
import { ROUTES, routeKey } from '../../../shared/http/routes.js';
import { resources, synth } from '../../support/synth.js';

const { templates } = synth({ regions: 'us-east-1' });
const routeKeys = new Set(resources(templates[0]!, 'AWS::ApiGatewayV2::Route').map(([, route]) => route.Properties.RouteKey as string));

describe('route table and deployment agree', () => {
  it.each(ROUTES.map((route) => [routeKey(route), route] as const))('%s has an API route and an existing handler family', (key, route) => {
    expect(routeKeys.has(key)).toBe(true);
    expect(handlers[route.handler]).toBeTypeOf('function');
    expect(existsSync(entryPath(handlerEntry(route.handler)))).toBe(true);
  });

  it('deploys a function for every handler family of functions/index.ts and no other', () => {
    expect([...HANDLER_FAMILIES].sort()).toEqual(Object.keys(handlers).sort());
  });
});
