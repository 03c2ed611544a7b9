/**
 * A real Keystone for tests: Debian's `keystone` package, configured in a
 * temporary directory (SQLite, fernet keys), bootstrapped with an admin and
 * served on a free loopback port by the package's own WSGI script (wsgiref).
 * Plus the few identity API calls the tests need to set up users, projects
 * and roles.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const ADMIN_PASSWORD = 'keystone-admin-secret';

/** Why a real Keystone cannot run here, or undefined when it can. */
export function keystoneUnavailableReason(): string | undefined {
  const directories = (process.env.PATH ?? '').split(delimiter);
  for (const program of ['keystone-manage', 'keystone-wsgi-public']) {
    const found = directories.some((directory) => {
      try {
        accessSync(join(directory, program), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
    if (!found) return `${program} not found: install Debian's keystone package (apt-get install keystone; .ci/run does)`;
  }
  return undefined;
}

export interface KeystoneServer {
  url: string;
  stop(): Promise<void>;
}

export async function startKeystone(): Promise<KeystoneServer> {
  const directory = await mkdtemp(join(tmpdir(), 'keystone-test-'));
  const configFile = join(directory, 'keystone.conf');
  await writeFile(
    configFile,
    [
      '[DEFAULT]',
      'use_stderr = true',
      '[database]',
      `connection = sqlite:///${directory}/keystone.db`,
      '[fernet_tokens]',
      `key_repository = ${directory}/fernet-keys`,
      '[fernet_receipts]',
      `key_repository = ${directory}/fernet-keys`,
      '[credential]',
      `key_repository = ${directory}/credential-keys`,
      // bcrypt's cheapest cost: every login hashes a password, and at the default cost a loaded machine needs seconds for each.
      '[identity]',
      'password_hash_rounds = 4',
      '',
    ].join('\n'),
  );
  const manage = (...args: string[]) => run('keystone-manage', ['--config-file', configFile, ...args], { cwd: directory });
  let server: ChildProcess | undefined;
  try {
    await manage('db_sync');
    await manage('fernet_setup', '--keystone-user', 'root', '--keystone-group', 'root');
    await manage('credential_setup', '--keystone-user', 'root', '--keystone-group', 'root');
    await manage('bootstrap', '--bootstrap-password', ADMIN_PASSWORD);
    // Keystone keeps a reading connection open while another writes: without WAL, SQLite answers "database is locked".
    await run('sqlite3', [join(directory, 'keystone.db'), 'PRAGMA journal_mode=WAL;']);

    server = spawn('keystone-wsgi-public', ['--host', '127.0.0.1', '--port', '0'], {
      cwd: directory,
      env: { ...process.env, OS_KEYSTONE_CONFIG_DIR: directory, OS_KEYSTONE_CONFIG_FILES: 'keystone.conf' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = server;
    let errors = '';
    started.stderr!.on('data', (chunk: Buffer) => {
      errors = (errors + chunk.toString()).slice(-4000);
    });
    const port = await new Promise<number>((resolve, reject) => {
      let output = '';
      started.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /Available at http:\/\/[^:]+:(\d+)\//.exec(output);
        if (match) resolve(Number(match[1]));
      });
      started.once('exit', (code) => reject(new Error(`keystone-wsgi-public exited with ${code}: ${errors}`)));
    });
    const url = `http://127.0.0.1:${port}`;
    return {
      url,
      stop: async () => {
        await stopGroup(started);
        await rm(directory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (server) await stopGroup(server);
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
}

async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGTERM');
  await exited;
}

/** Scope of a token: a project (by id), or the whole system. */
export type Scope = { projectId: string } | 'system';

/** A small identity API client, acting with the token it holds. */
export class KeystoneAdmin {
  constructor(
    readonly url: string,
    private readonly token: string,
  ) {}

  static async login(url: string, user: string, password: string, scope: Scope): Promise<KeystoneAdmin> {
    return new KeystoneAdmin(url, await issueToken(url, user, password, scope));
  }

  private async call(method: string, path: string, body?: unknown): Promise<any> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: { 'x-auth-token': this.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? undefined : response.json();
  }

  async createProject(name: string): Promise<string> {
    return (await this.call('POST', '/v3/projects', { project: { name, domain_id: 'default' } })).project.id;
  }

  async createUser(name: string, password: string): Promise<string> {
    return (await this.call('POST', '/v3/users', { user: { name, password, domain_id: 'default' } })).user.id;
  }

  async roleId(name: string): Promise<string> {
    const existing = (await this.call('GET', `/v3/roles?name=${encodeURIComponent(name)}`)).roles;
    if (existing.length > 0) return existing[0].id;
    return (await this.call('POST', '/v3/roles', { role: { name } })).role.id;
  }

  async grant(userId: string, role: string, scope: Scope): Promise<void> {
    const roleId = await this.roleId(role);
    const target = scope === 'system' ? '/v3/system' : `/v3/projects/${scope.projectId}`;
    await this.call('PUT', `${target}/users/${userId}/roles/${roleId}`);
  }

  async revoke(token: string): Promise<void> {
    const response = await fetch(`${this.url}/v3/auth/tokens`, { method: 'DELETE', headers: { 'x-auth-token': this.token, 'x-subject-token': token } });
    if (response.status !== 204) throw new Error(`revoking a token: ${response.status}`);
  }
}

export async function issueToken(url: string, user: string, password: string, scope: Scope): Promise<string> {
  const response = await fetch(`${url}/v3/auth/tokens?nocatalog`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password } } },
        scope: scope === 'system' ? { system: { all: true } } : { project: { id: scope.projectId } },
      },
    }),
  });
  const token = response.headers.get('x-subject-token');
  if (response.status !== 201 || !token) throw new Error(`login as ${user}: ${response.status} ${await response.text()}`);
  return token;
}
