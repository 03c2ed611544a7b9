/**
 * Configuration seen from outside: a policy file, CORS, requests Node's
 * parser refuses, and `npm start` refusing to run on a broken configuration.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { useLocalService } from '../support/local-service.js';
import { startServiceProcess } from '../support/service-process.js';
import { client } from '../../admin/placement-client.js';

let directory: string;
/** The environment without this file's configuration, for the `npm start` runs below. */
const savedEnvironment = { ...process.env };
const service = useLocalService(async () => {
  directory = await mkdtemp(join(tmpdir(), 'placement-config-'));
  await writeFile(join(directory, 'policy.yaml'), '# traits are public here\n"placement:traits:list": "@"\n');
  return {
    PLACEMENT_POLICY_FILE: join(directory, 'policy.yaml'),
    PLACEMENT_CORS_ALLOWED_ORIGIN: 'http://valid.example.com',
    PLACEMENT_CORS_ALLOW_HEADERS: 'openstack-api-version',
  };
});
afterAll(() => rm(directory, { recursive: true, force: true }));

describe('a policy file', () => {
  it('overrides the rules it names and keeps the others', async () => {
    const user = client(service.url, { token: 'user', version: '1.6' });
    expect((await user('GET', '/traits')).status).toBe(200);
    expect((await user('GET', '/resource_providers')).status).toBe(403);
  });
});

describe('CORS', () => {
  const preflight = (headers: Record<string, string>) => fetch(`${service.url}/resource_providers`, { method: 'OPTIONS', headers });

  it('answers an allowed preflight with the CORS headers and no body', async () => {
    const response = await preflight({
      origin: 'http://valid.example.com',
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'openstack-api-version',
    });
    expect(response.status).toBe(200);
    expect(Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control') || name === 'vary'))).toEqual({
      vary: 'Origin',
      'access-control-allow-origin': 'http://valid.example.com',
      'access-control-allow-credentials': 'true',
      'access-control-max-age': '3600',
      'access-control-allow-methods': 'GET',
      'access-control-allow-headers': 'openstack-api-version',
    });
    expect(response.headers.get('x-openstack-request-id')).toMatch(/^req-/);
    expect(await response.text()).toBe('');
  });

  it('answers 200 without CORS headers for another origin, method or header', async () => {
    const cases: Record<string, string>[] = [
      { origin: 'http://invalid.example.com', 'access-control-request-method': 'GET' },
      { origin: 'http://valid.example.com', 'access-control-request-method': 'TRACE' },
      { origin: 'http://valid.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-secret' },
      { origin: 'http://valid.example.com' },
    ];
    for (const headers of cases) {
      const response = await preflight(headers);
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('decorates responses, errors included, for an allowed origin only', async () => {
    const valid = await fetch(`${service.url}/resource_providers`, { headers: { origin: 'http://valid.example.com' } });
    expect(valid.status).toBe(401);
    expect(valid.headers.get('access-control-allow-origin')).toBe('http://valid.example.com');
    expect(valid.headers.get('access-control-expose-headers')).toContain('OpenStack-API-Version');
    const root = await fetch(`${service.url}/`, { headers: { origin: 'http://valid.example.com' } });
    expect(root.headers.get('vary')).toBe('openstack-api-version,Origin');
    const invalid = await fetch(`${service.url}/`, { headers: { origin: 'http://invalid.example.com' } });
    expect(invalid.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('requests Node cannot parse', () => {
  /** Sends the request's parts in separate writes (and so TCP segments), 50 ms apart, and reads the answer. */
  const raw = (...parts: string[]) =>
    new Promise<string>((resolve, reject) => {
      const { port } = new URL(service.url);
      const send = async () => {
        socket.setNoDelay(true);
        for (const [index, part] of parts.entries()) {
          if (index > 0) await setTimeout(50);
          socket.write(part);
        }
      };
      const socket = connect(Number(port), '127.0.0.1', () => void send());
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });

  it("answers a non-numeric content-length with Placement's 400", async () => {
    const response = await raw(
      'POST /resource_providers HTTP/1.1\r\nHost: x\r\nx-auth-token: admin\r\ncontent-type: application/json\r\ncontent-length: hi mom\r\n\r\n{}',
    );
    expect(response).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(response).toContain('openstack-api-version: placement 1.0\r\n');
    expect(response).not.toContain('vary:');
    const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
    expect(body.errors[0].detail).toContain('content-length header must be an integer');
  });

  it('answers the same when the head arrives in pieces, the first ending after the bad content-length', async () => {
    const response = await raw(
      'POST /resource_providers HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: hi mom\r\n',
      'x-auth-token: admin\r\n\r\n',
      '{}',
    );
    expect(response).toMatch(/^HTTP\/1\.1 400 Bad Request\r\ncontent-type: application\/json\r\n/);
    expect(response).toContain('content-length header must be an integer');
  });

  it('answers a head past the bound with 431, the rest of it read and dropped (closing on it unread reset the answer on Node 24)', async () => {
    const response = await raw(`GET /traits?name=in:${'A'.repeat(300_000)} HTTP/1.1\r\nHost: x\r\nx-auth-token: admin\r\n\r\n`);
    expect(response).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  });

  it('authenticates such a request first, like any other', async () => {
    const response = await raw('GET /resource_providers HTTP/1.1\r\nHost: x\r\ncontent-length: hi mom\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/);
  });
});

describe('npm start with a broken configuration', () => {
  const start = (environment: Record<string, string>) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile('npx', ['tsx', 'local/start.ts'], { env: { ...savedEnvironment, PORT: '0', ...environment } }, () => undefined);
      let stderr = '';
      child.stderr!.on('data', (chunk) => (stderr += chunk.toString()));
      child.on('exit', (code) => resolve({ code, stderr }));
    });

  it('exits non-zero naming the problem', async () => {
    const malformed = join(directory, 'malformed.yaml');
    await writeFile(malformed, '"placement:traits:list": @\n');
    const unknownRule = join(directory, 'unknown-rule.yaml');
    await writeFile(unknownRule, '"placement:traits:list": "rule:nope"\n');
    const cases: [Record<string, string>, string][] = [
      [
        { PLACEMENT_POLICY_FILE: malformed },
        `placement: cannot start: PLACEMENT_POLICY_FILE ${malformed}: line 1: Plain value cannot start with reserved character @`,
      ],
      [{ PLACEMENT_POLICY_FILE: unknownRule }, 'rule "placement:traits:list" refers to undefined rule "nope"'],
      [{ PLACEMENT_POLICY_FILE: join(directory, 'absent.yaml') }, 'cannot read it'],
      [{ PLACEMENT_AUTH_STRATEGY: 'keystone' }, 'PLACEMENT_AUTH_STRATEGY=keystone needs PLACEMENT_KEYSTONE_URL'],
      [{ PLACEMENT_AUTH_STRATEGY: 'basic' }, 'PLACEMENT_AUTH_STRATEGY must be "noauth2" or "keystone"'],
    ];
    const results = await Promise.all(cases.map(([environment]) => start(environment)));
    results.forEach((result, index) => {
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(cases[index]![1]);
    });
  });

  it('logs the release it runs, as the functions in AWS do', async () => {
    const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
    const service = await startServiceProcess({ environment: { PLACEMENT_RELEASE: '' } });
    try {
      // An empty answer logs why (a WARN record).
      const answer = await client(service.url, { token: 'admin', version: '1.39' })('GET', '/allocation_candidates?resources=VCPU:1');
      expect(answer.status).toBe(200);
      const deadline = Date.now() + 30_000;
      let record: { release?: string } | undefined;
      while (record === undefined && Date.now() < deadline) {
        record = service
          .output()
          .split('\n')
          .filter((line) => line.includes('"no allocation candidates"'))
          .map((line) => JSON.parse(line) as { release?: string })[0];
        if (record === undefined) await setTimeout(100);
      }
      expect(record).toMatchObject({ release: version });
    } finally {
      await service.stop();
    }
  });

  it('says in one line what to install on a machine without Java', async () => {
    // Node by its path, and a PATH where no java is (an empty directory): as on a fresh machine of this kind.
    const emptyPath = await mkdtemp(join(tmpdir(), 'no-java-'));
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const environment = { ...savedEnvironment, PATH: emptyPath, PORT: '0', PLACEMENT_DYNAMODB_ENDPOINT: '', NODE_NO_WARNINGS: '1' };
      execFile(process.execPath, ['--import', 'tsx', 'local/start.ts'], { env: environment }, (error, _stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });
    await rm(emptyPath, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'placement: cannot start: DynamoDB Local needs Java 17 or later, and there is no java on the PATH (Debian: apt-get install openjdk-17-jre-headless)',
    ]);
  });
});
