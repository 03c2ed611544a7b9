/**
 * `npm run upgrade:mixed -- [--ports BASE] [--seed N] [--ops N] [--short-ops N] [--logs DIR]`
 *
 * The previous release (built from the commit CHANGELOG.md records for it)
 * and this checkout's code on one DynamoDB Local table, checked against
 * upstream Placement with the differential tester (docs/testing/upgrades.md):
 *   (a) mixed: the release creates the table, the new code joins, and each
 *       request goes at random to one of the two;
 *   (b) rollback: on a fresh table the new code alone writes, both read the
 *       same state (placement-admin verify), then the release alone serves;
 *   (c) finalize: on that table, `placement-admin upgrade finalize`, refused
 *       while the release runs, then the new code alone serves.
 * Ports: the proxy on BASE, the release on BASE+1, the new code on BASE+2,
 * upstream on BASE+3. Prints a summary table; exits 1 on any difference, 5xx
 * or error logged.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local.js';
import { checkoutReleases, compareVersions, type Release } from './changelog.js';
import { runToEnd, startGroup, stopGroup, waitForLine, type Started } from './processes.js';
import { Router, startProxy, type Backend, type Proxy, type Tally } from './proxy.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** ../shared beside the clone (as CI has it), or PLACEMENT_SHARED_DIR (a git worktree elsewhere), as the tests find it. */
const REFERENCE_SCRIPTS = join(process.env.PLACEMENT_SHARED_DIR ?? join(ROOT, '..', 'shared'), 'reference');
const ALL_PROFILES = 'flat,nested,sharing,mixed';
const SHORT_PROFILES = 'sharing,mixed';
/** A loaded machine takes minutes to start a service: slow is not broken. */
const START_TIMEOUT_MS = 600_000;
/** What a service logs when something went wrong: an ERROR (or worse) record, a failed start, an uncaught error. */
const ERROR_LINE = /"level":"(ERROR|CRITICAL|FATAL)"|^placement: cannot start|^\w*Error\b/;

const USAGE = 'usage: npm run upgrade:mixed -- [--ports BASE] [--seed N] [--ops N] [--short-ops N] [--logs DIR]';

function parse() {
  const { values } = parseArgs({
    options: {
      ports: { type: 'string', default: '8790' },
      seed: { type: 'string', default: '20261126' },
      ops: { type: 'string', default: '300' },
      'short-ops': { type: 'string', default: '200' },
      logs: { type: 'string' },
    },
  });
  const [ports, seed, ops, shortOps] = [values.ports, values.seed, values.ops, values['short-ops']].map(Number) as number[];
  if (![ports, seed, ops, shortOps].every((value) => Number.isInteger(value) && value! > 0)) {
    console.error(USAGE);
    process.exit(2);
  }
  const logs = values.logs ?? mkdtempSync(join(tmpdir(), 'placement-upgrade-logs-'));
  mkdirSync(logs, { recursive: true });
  return { ports: ports!, seed: seed!, ops: ops!, shortOps: shortOps!, logs };
}

const options = parse();
const started = performance.now();
let phaseStarted = started;
/** One line per phase with its duration, as CI prints them. */
function phaseDone(what: string): void {
  const now = performance.now();
  console.log(`[upgrade] ${what}: ${((now - phaseStarted) / 1000).toFixed(0)} s (total ${((now - started) / 1000).toFixed(0)} s)`);
  phaseStarted = now;
}

// ---------------------------------------------------------------- the two versions

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function theRelease(): { release: Release & { commit: string }; newVersion: string } {
  const { newVersion, release } = checkoutReleases(ROOT);
  if (spawnSync('git', ['cat-file', '-e', `${release.commit}^{commit}`], { cwd: ROOT }).status !== 0) {
    const shallow = git('rev-parse', '--is-shallow-repository') === 'true';
    throw new Error(
      `release ${release.version}'s commit ${release.commit} (CHANGELOG.md) is not in this clone` +
        (shallow ? ': it is a shallow clone; fetch the full history (git fetch --unshallow) or clone without --depth' : ': fetch the history that has it'),
    );
  }
  return { release, newVersion };
}

/** The release's sources from git history in a directory of their own, with their own dependencies installed. */
async function buildRelease(release: Release & { commit: string }): Promise<string> {
  const directory = mkdtempSync(join(tmpdir(), `placement-${release.version}-`));
  const unpacked = spawnSync('sh', ['-c', 'git archive --format=tar "$1" | tar -x -C "$2"', 'sh', release.commit, directory], { cwd: ROOT, stdio: 'inherit' });
  if (unpacked.status !== 0) throw new Error(`cannot unpack ${release.commit} into ${directory}`);
  const install = await runToEnd(`npm-ci-${release.version}`, options.logs, 'npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: directory });
  if (install.status !== 0) throw new Error(`npm ci of release ${release.version} failed; its log: ${install.log}`);
  return directory;
}

interface Version {
  label: 'release' | 'new';
  name: string;
  directory: string;
  port: number;
  logs: string[];
}

interface Service {
  version: Version;
  process: Started;
  backend: Backend;
}

/** `npm start` of a version on the shared table (it creates the table if there is none yet), once it says it listens. */
async function startService(version: Version, endpoint: string): Promise<Service> {
  const name = `${version.label}-${version.logs.length + 1}`;
  const process = startGroup(name, options.logs, 'npm', ['start'], {
    cwd: version.directory,
    // Both versions read the format every 2 s, and no request of theirs runs past 10 s: the finalize's build waits 12 s, not
    // the local default's 90, for every request that read the older format to end.
    env: { PORT: String(version.port), PLACEMENT_DYNAMODB_ENDPOINT: endpoint, PLACEMENT_STORAGE_FORMAT_SECONDS: '2', PLACEMENT_LONGEST_REQUEST_SECONDS: '10' },
  });
  running.add(process);
  version.logs.push(process.log);
  const [, url, database] = await waitForLine(process, /^Placement listening on (\S+) \(DynamoDB at (\S+)\)$/m, START_TIMEOUT_MS);
  if (database !== endpoint) throw new Error(`${version.name} uses DynamoDB at ${database}, not the shared ${endpoint}`);
  return { version, process, backend: { name: version.label, url: url! } };
}

async function stopService(service: Service): Promise<void> {
  await stopGroup(service.process);
  running.delete(service.process);
}

// ---------------------------------------------------------------- the runs

interface Row {
  step: string;
  passed?: number;
  failed?: number;
  tallies?: Map<string, Tally>;
  compared?: number;
  differences?: number;
  note?: string;
}

const rows: Row[] = [];
const failures: string[] = [];
let runs = 0;

/** The tsx this script runs under, for the checkout's own commands (difftest, placement-admin) in processes of their own. */
const tsx = (entry: string, args: string[]) => [process.execPath, [...process.execArgv, join(ROOT, entry), ...args]] as const;

function referenceScript(name: 'start' | 'stop'): string {
  return execFileSync('bash', [join(REFERENCE_SCRIPTS, `${name}-reference.sh`), '--port', String(options.ports + 3)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A differential run against a fresh upstream, through the proxy (to whichever backends it routes to now). */
async function difftest(step: string, router: Router, proxy: Proxy, seed: number, ops: number, profiles: string, releaseServes: boolean): Promise<void> {
  const refusesRenamesInUse = releaseServes && compareVersions(releaseNumber, '1.1.0') < 0;
  referenceScript('stop');
  const reference = /^URL=(\S+)$/m.exec(referenceScript('start'))?.[1];
  if (reference === undefined) throw new Error('start-reference.sh printed no URL');
  router.takeTallies();
  const [command, args] = tsx('scripts/difftest/main.ts', [
    '--reference',
    reference,
    '--target',
    proxy.url,
    '--seed',
    String(seed),
    '--ops',
    String(ops),
    '--profile',
    profiles,
    // Release 1.0.0 refuses to rename a class in use (409, where upstream renames it); 1.1.0 renames it on a table at format 2.
    ...(refusesRenamesInUse ? ['--without-renames-in-use'] : []),
  ]);
  const run = await runToEnd(`difftest-${++runs}`, options.logs, command, [...args], { cwd: ROOT });
  const tallies = router.takeTallies();
  referenceScript('stop');
  const summary = /^(\d+) passed, (\d+) failed\s*$/m.exec(run.output.trimEnd().split('\n').at(-1) ?? '');
  const row: Row = { step, tallies, passed: Number(summary?.[1] ?? 0), failed: Number(summary?.[2] ?? 0) };
  rows.push(row);
  const serverErrors = [...tallies.values()].reduce((sum, tally) => sum + tally.serverErrors, 0);
  if (summary === undefined || row.failed! > 0 || run.status !== 0 || serverErrors > 0) {
    failures.push(`${step}: ${row.failed} failed, ${serverErrors} answers 5xx (exit status ${run.status}); the run's output: ${run.log}`);
    console.log(run.output.split('\n').slice(-40).join('\n'));
  }
  phaseDone(`${step} (seed ${seed}, ${ops} ops × ${profiles})`);
}

/** What the release and the new code read from the same table, compared item by item (placement-admin verify). */
async function compareState(step: string, release: Service, fresh: Service): Promise<void> {
  const [command, args] = tsx('admin/main.ts', ['verify', '--from', release.backend.url, '--to', fresh.backend.url, '--quiet']);
  const run = await runToEnd(`verify-${++runs}`, options.logs, command, [...args], { cwd: ROOT });
  const summary = /^(\d+) checked, (\d+) differences$/m.exec(run.output);
  rows.push({ step, compared: Number(summary?.[1] ?? 0), differences: Number(summary?.[2] ?? 0) });
  if (summary === null || run.status !== 0) {
    failures.push(`${step}: the release and the new code read different states; the comparison: ${run.log}`);
    console.log(run.output.split('\n').slice(-40).join('\n'));
  }
  phaseDone(step);
}

/** `placement-admin upgrade …` of the new code; undefined when the new code has no such command. */
async function upgradeCommand(args: string[]): Promise<{ status: number; output: string } | undefined> {
  const [command, help] = tsx('admin/main.ts', ['--help']);
  const overview = await runToEnd(`admin-help-${++runs}`, options.logs, command, [...help], { cwd: ROOT });
  if (overview.status !== 0) throw new Error(`placement-admin --help exited with ${overview.status}; its output: ${overview.log}`);
  if (!/^\s+upgrade\s/m.test(overview.output)) return undefined;
  const [, upgradeArgs] = tsx('admin/main.ts', ['upgrade', ...args]);
  const run = await runToEnd(`upgrade-${args[0]}-${++runs}`, options.logs, command, [...upgradeArgs], { cwd: ROOT });
  console.log(`$ placement-admin upgrade ${args.join(' ')}   (exit status ${run.status})\n${run.output.trimEnd()}`);
  return run;
}

/** Finalize the upgrade: refused while the release still runs, done once only the new code does. */
async function finalize(release: Service, fresh: Service, versions: { release: string; new: string }): Promise<void> {
  const urls = (...services: Service[]) => services.flatMap((service) => ['--url', service.backend.url]);
  const check = await upgradeCommand(['check', ...urls(release, fresh)]);
  if (check === undefined) {
    // A release that changes nothing stored needs no finalize; one numbered above the previous release must offer it.
    if (compareVersions(versions.new, versions.release) > 0) failures.push(`c finalize: ${versions.new} has no "placement-admin upgrade finalize"`);
    rows.push({ step: 'c finalize', note: 'skipped: upgrade finalize not available' });
    console.log('skipped: upgrade finalize not available');
    await stopService(release);
    return;
  }
  const refused = await upgradeCommand(['finalize', ...urls(release, fresh)]);
  if (refused?.status !== 1) failures.push(`c finalize: finalize while the release runs exited with ${refused?.status}, not 1 (refused)`);
  await stopService(release);
  const done = await upgradeCommand(['finalize', ...urls(fresh)]);
  if (done?.status !== 0) failures.push(`c finalize: finalize with the new code alone exited with ${done?.status}`);
  await upgradeCommand(['check', ...urls(fresh)]);
  rows.push({ step: 'c finalize', note: `refused while the release ran (exit ${refused?.status}), then done (exit ${done?.status})` });
  phaseDone('c finalize');
  await verifyEntries('c entries verified after the finalize', fresh);
}

/** The table's entries read against its providers (placement-admin upgrade verify), where the new code has such a command. */
async function verifyEntries(step: string, service: Service): Promise<void> {
  const run = await upgradeCommand(['verify', '--url', service.backend.url]);
  if (run === undefined) return;
  const summary = /^(\d+) providers, (\d+) entries checked, (\d+) pending cleanup, (\d+) disagreements$/m.exec(run.output);
  rows.push({ step, compared: Number(summary?.[2] ?? 0), differences: Number(summary?.[4] ?? 0), note: `${summary?.[1] ?? '?'} providers` });
  if (summary === null || run.status !== 0) failures.push(`${step}: the entries disagree with the providers; the verify: ${run.output.slice(-2000)}`);
  phaseDone(step);
}

// ---------------------------------------------------------------- the summary

function summaryTable(): string {
  const pair = (tallies: Map<string, Tally> | undefined, field: keyof Tally) =>
    tallies === undefined ? '' : `${tallies.get('release')?.[field] ?? 0} / ${tallies.get('new')?.[field] ?? 0}`;
  const cell = (value: number | undefined) => (value === undefined ? '' : String(value));
  const lines = [
    '| step | requests | passed | failed | served by release / new | 5xx by release / new | state items compared | differences | note |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const requests = row.passed === undefined ? undefined : row.passed + row.failed!;
    const cells = [cell(requests), cell(row.passed), cell(row.failed), pair(row.tallies, 'served'), pair(row.tallies, 'serverErrors')];
    lines.push(`| ${[row.step, ...cells, cell(row.compared), cell(row.differences), row.note ?? ''].join(' | ')} |`);
  }
  return lines.join('\n');
}

function errorsLogged(version: Version): number {
  return version.logs.reduce(
    (sum, log) =>
      sum +
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => ERROR_LINE.test(line)).length,
    0,
  );
}

// ---------------------------------------------------------------- the whole run

const running = new Set<Started>();
/** The previous release's version number (CHANGELOG.md), once read. */
let releaseNumber = '';
const releaseVersion: Version = { label: 'release', name: 'the release', directory: '', port: options.ports + 1, logs: [] };
const newCode: Version = { label: 'new', name: 'the new code', directory: ROOT, port: options.ports + 2, logs: [] };
let database: DynamoDbLocal | undefined;
let proxy: Proxy | undefined;
let releaseDirectory: string | undefined;

async function cleanUp(): Promise<void> {
  await Promise.all([...running].map((process) => stopGroup(process)));
  running.clear();
  await proxy?.stop();
  await database?.stop();
  if (existsSync(join(REFERENCE_SCRIPTS, 'stop-reference.sh'))) referenceScript('stop');
  if (releaseDirectory !== undefined) rmSync(releaseDirectory, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void cleanUp().finally(() => process.exit(130)));

async function main(): Promise<void> {
  if (!existsSync(join(REFERENCE_SCRIPTS, 'start-reference.sh'))) throw new Error(`no upstream reference at ${REFERENCE_SCRIPTS}`);
  const { release, newVersion } = theRelease();
  console.log(
    `[upgrade] release ${release.version} (${release.commit}, storage format ${release.storageFormat}) and the new code ${newVersion}; logs in ${options.logs}`,
  );
  releaseDirectory = await buildRelease(release);
  phaseDone(`release ${release.version} unpacked and installed (npm ci)`);
  releaseNumber = release.version;
  releaseVersion.name = `release ${release.version}`;
  releaseVersion.directory = releaseDirectory;
  newCode.name = `the new code ${newVersion}`;
  const router = new Router(options.seed);
  proxy = await startProxy(router, options.ports);

  // (a) The release creates the table, the new code joins; each request to either.
  database = await startDynamoDbLocal();
  let oldService = await startService(releaseVersion, database.endpoint);
  let newService = await startService(newCode, database.endpoint);
  phaseDone('a: release and new code started on one table');
  router.route([oldService.backend, newService.backend]);
  await difftest('a mixed', router, proxy, options.seed, options.ops, ALL_PROFILES, true);
  await Promise.all([stopService(oldService), stopService(newService)]);
  await database.stop();

  // (b) On a fresh table the release created: the new code alone writes; both read it; the release alone serves.
  database = await startDynamoDbLocal();
  oldService = await startService(releaseVersion, database.endpoint);
  await stopService(oldService);
  newService = await startService(newCode, database.endpoint);
  phaseDone('b: table created by the release, new code started alone');
  router.route([newService.backend]);
  await difftest('b new code alone', router, proxy, options.seed + 1, options.shortOps, SHORT_PROFILES, false);
  oldService = await startService(releaseVersion, database.endpoint);
  await compareState('b state read by both', oldService, newService);
  await stopService(newService);
  router.route([oldService.backend]);
  await difftest('b release alone', router, proxy, options.seed + 2, options.shortOps, SHORT_PROFILES, true);

  // (c) The new code joins again; finalize (refused while the release runs); the new code alone serves.
  newService = await startService(newCode, database.endpoint);
  await finalize(oldService, newService, { release: release.version, new: newVersion });
  router.route([newService.backend]);
  await difftest('c new code alone', router, proxy, options.seed + 3, options.shortOps, SHORT_PROFILES, false);
  await verifyEntries('c entries verified after the new code alone', newService);
  await stopService(newService);
}

try {
  await main();
} catch (error) {
  failures.push((error as Error).message);
} finally {
  await cleanUp();
}
console.log(`\n${summaryTable()}\n`);
for (const version of [releaseVersion, newCode]) {
  const errors = errorsLogged(version);
  console.log(`errors logged by ${version.name}: ${errors} (${version.logs.join(', ')})`);
  if (errors > 0) failures.push(`${version.name} logged ${errors} errors`);
}
if (failures.length > 0) {
  console.log(`\n[upgrade] FAILED:\n${failures.map((failure) => `- ${failure}`).join('\n')}`);
}
console.log(`[upgrade] done in ${((performance.now() - started) / 1000).toFixed(0)} s; logs in ${options.logs}`);
process.exit(failures.length > 0 ? 1 : 0);
