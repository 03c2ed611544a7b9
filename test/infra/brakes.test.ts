import { describe, expect, it } from 'vitest';
import { brakesFor } from '../../infra/brakes.js';
import { HANDLER_FAMILIES } from '../../infra/settings.js';

describe('the brakes, sized from nova-compute polling', () => {
  const thousand = brakesFor({ computeNodes: 1000, instancesPerNode: 30 }, HANDLER_FAMILIES, 60);

  it('sees 168 + 60 x V requests per node per hour', () => {
    expect(thousand.steadyRequestsPerSecond).toBeCloseTo((1000 * (168 + 60 * 30)) / 3600, 6);
    expect(brakesFor({ computeNodes: 3600, instancesPerNode: 0 }, HANDLER_FAMILIES, 60).steadyRequestsPerSecond).toBeCloseTo(168, 6);
  });

  it('lets twice the steady rate through the stage, with a bucket of two seconds of it', () => {
    expect(thousand.rateLimit).toBe(1100);
    expect(thousand.burstLimit).toBe(2200);
    // A small region keeps a floor for operators' scripts; a huge one is capped by API Gateway's account burst.
    expect(brakesFor({ computeNodes: 10, instancesPerNode: 30 }, HANDLER_FAMILIES, 60)).toMatchObject({ rateLimit: 100, burstLimit: 200 });
    expect(brakesFor({ computeNodes: 5000, instancesPerNode: 30 }, HANDLER_FAMILIES, 60)).toMatchObject({ rateLimit: 5500, burstLimit: 5000 });
  });

  it("reserves concurrency for twice each family's share at 50 ms a request, at least 10", () => {
    // 533 requests a second of GET .../allocations and GET /allocations/{c}: 2 x 533 x 0.05 s.
    expect(thousand.concurrency.allocations).toBe(54);
    for (const family of HANDLER_FAMILIES.filter((name) => name !== 'allocations')) expect(thousand.concurrency[family], family).toBe(10);
    expect(thousand.routerConcurrency).toBe(54 + 10 * (HANDLER_FAMILIES.length - 1));
    // Well inside an account's default 1,000, which must keep 100 unreserved.
    expect(thousand.routerConcurrency + thousand.authorizerConcurrency).toBeLessThan(900);
  });

  it('sizes the authorizer by how often API Gateway asks it', () => {
    // Cached: one Keystone check per nova-compute token per minute, 0.2 s each.
    expect(thousand.authorizerConcurrency).toBe(10);
    expect(brakesFor({ computeNodes: 5000, instancesPerNode: 30 }, HANDLER_FAMILIES, 10).authorizerConcurrency).toBe(200);
    // Uncached: every request, mostly answered from its own token cache.
    expect(brakesFor({ computeNodes: 1000, instancesPerNode: 30 }, HANDLER_FAMILIES, 0).authorizerConcurrency).toBe(55);
  });
});
