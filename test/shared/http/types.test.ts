import { describe, expect, it } from 'vitest';
import { ROUTES, routeKey } from '../../../shared/http/routes.js';
import type { Operation, Operations } from '../../../shared/http/types.js';

const operation: Operation = async () => ({ status: 204 });

describe("a family's operations map", () => {
  it('must name exactly the routes of its family, or it does not compile', () => {
    // @ts-expect-error GET /resource_providers/{uuid}/usages is missing
    const missing: Operations<'usages'> = { 'GET /usages': operation };
    const misnamed: Operations<'usages'> = {
      'GET /usages': operation,
      'GET /resource_providers/{uuid}/usages': operation,
      // @ts-expect-error no such route in the family
      'GET /usage': operation,
    };
    const exact: Operations<'usages'> = { 'GET /usages': operation, 'GET /resource_providers/{uuid}/usages': operation };
    const family = ROUTES.filter((route) => route.handler === 'usages').map(routeKey);
    expect(Object.keys(exact).sort()).toEqual(family.sort());
    expect([missing, misnamed]).toHaveLength(2);
  });
});
