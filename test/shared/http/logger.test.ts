/** The handlers' log lines, through the whole middleware chain: Powertools' Lambda context, then Placement's request id and microversion. */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { operations } from '../../../functions/traits.js';
import { lambdaHandler } from '../../../shared/http/lambda.js';
import { logger } from '../../../shared/http/logger.js';
import { apiGatewayEvent, lambdaContext } from '../../support/lambda-request.js';

// Lambda says how it started the instance; Powertools counts a cold start only for an on-demand one. Set before the logger exists.
vi.hoisted(() => {
  process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
});
afterAll(() => {
  delete process.env.AWS_LAMBDA_INITIALIZATION_TYPE;
});

/** The structured lines the logger writes while `act` runs. */
async function linesWrittenBy(act: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const written: string[] = [];
  const capture = (chunk: unknown) => {
    written.push(String(chunk));
    return true;
  };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    await act();
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return written
    .flatMap((text) => text.split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.message === 'listing traits');
}

afterEach(() => logger.resetKeys());

describe("a handler's log lines", () => {
  const handler = lambdaHandler<'traits'>({
    ...operations,
    'GET /traits': async (request) => {
      if (request.query.has('name')) logger.appendKeys({ left: 'over' });
      logger.warn('listing traits', { filtered: request.query.has('name') });
      return { status: 200, body: { traits: [] } };
    },
  });
  const call = (version: string, query = '') =>
    handler(
      apiGatewayEvent({ path: '/traits', query, headers: { 'x-auth-token': 'admin', 'openstack-api-version': `placement ${version}` } }),
      lambdaContext(),
    );

  it("carry the function, its cold start, and the request's id and microversion, and nothing of the request before", async () => {
    let first: Awaited<ReturnType<typeof call>> | undefined;
    const [line] = await linesWrittenBy(async () => (first = await call('1.6', 'name=in:A')));
    expect(line).toMatchObject({
      function_name: 'placement-traits',
      function_memory_size: '512',
      function_request_id: 'lambda-request',
      cold_start: true,
      request_id: first!.headers!['x-openstack-request-id'],
      microversion: '1.6',
      filtered: true,
    });
    const [next] = await linesWrittenBy(() => call('1.39'));
    expect(next).toMatchObject({ cold_start: false, microversion: '1.39', filtered: false });
    expect(next!.request_id).not.toBe(line!.request_id);
    expect(line).toHaveProperty('left');
    expect(next).not.toHaveProperty('left');
  });
});
