/**
 * One differential run: both services emptied, then one seeded sequence of
 * requests sent to both, each answer pair compared (compare.ts).
 */
import { PlacementClient, type ApiResponse } from '../../admin/placement-client.js';
import { ROUTES, routeKey } from '../../shared/http/routes.js';
import { checkLimited, compareNormalised, normaliseAnswer, withoutCandidates, type CompareOptions, type Side } from './compare.js';
import { Random } from './random.js';
import { resetService } from './reset.js';
import { consumersLeftBehind, removeLeftBehindConsumer, UPSTREAM_FAULTS } from './upstream-faults.js';
import { Model, nextOperation, VERSIONS, type Both, type DiffRequest, type Profile, type Step } from './scenario.js';

export interface RunOptions {
  reference: string;
  target: string;
  seed: number;
  ops: number;
  profile: Profile;
  /** Leave classes in use out of renames (`--without-renames-in-use`): for a target that release 1.0.0 serves in part. */
  withoutRenamesInUse?: boolean;
  /** Called with each mismatch line as it is found. */
  onMismatch?: (line: string) => void;
  /** Called with every request and both statuses (`--verbose`). */
  onStep?: (line: string) => void;
}

export interface Mismatch {
  index: number;
  operation: string;
  request: DiffRequest;
  differences: string[];
}

export interface OperationTally {
  requests: number;
  failed: number;
}

export interface RunReport {
  profile: Profile;
  seed: number;
  passed: number;
  failed: number;
  mismatches: Mismatch[];
  byOperation: Map<string, OperationTally>;
  routes: Set<string>;
  versions: Set<string>;
  hostile: number;
  ignoredTraits: string[];
  /** Answers where upstream is plainly wrong and the target was checked against what is right instead, per fault. */
  tolerated: Map<string, number>;
}

const ROUTE_PATTERNS = ROUTES.map((route) => ({
  key: routeKey(route),
  method: route.method,
  pattern: new RegExp(`^${route.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

function routeOf(request: DiffRequest): string | undefined {
  const path = request.path.split('?')[0];
  return ROUTE_PATTERNS.find((route) => route.method === request.method && route.pattern.test(path))?.key;
}

async function send(placement: PlacementClient, request: DiffRequest): Promise<ApiResponse> {
  try {
    return await placement.request(request.method, request.path, {
      version: request.version,
      json: request.json,
      rawBody: request.rawBody,
      headers: request.headers,
      timeoutMs: 60_000,
    });
  } catch (error) {
    // A dropped connection is an answer too: it must happen on both sides or neither.
    return {
      status: 0,
      headers: new Headers(),
      text: `no answer: ${(error as Error).message.replace(placement.baseUrl, '<base-url>')}`,
      body: undefined,
      wireBytes: 0,
      ms: 0,
    };
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** The uuid a service generated for a request: its Location, or the one uuid of the answer the request did not contain. */
function generatedUuid(answer: ApiResponse, request: DiffRequest): string | undefined {
  const location = answer.headers.get('location');
  if (location) return location.split('/').pop();
  const sent = new Set(`${request.path} ${JSON.stringify(request.json ?? request.rawBody ?? '')}`.match(UUID) ?? []);
  const fresh = new Set((answer.text.match(UUID) ?? []).filter((uuid) => !sent.has(uuid)));
  return fresh.size === 1 ? [...fresh][0] : undefined;
}

/** The request as one line: method, path, version and body, enough to replay it. */
function describe(request: DiffRequest): string {
  const parts = [request.method, request.path, request.version === null ? '(no version)' : `(${request.version})`];
  for (const [name, value] of Object.entries(request.headers ?? {})) parts.push(`${name}: ${JSON.stringify(value)}`);
  if (request.json !== undefined) parts.push(JSON.stringify(request.json));
  if (request.rawBody !== undefined) parts.push(`raw ${JSON.stringify(request.rawBody)}`);
  const line = parts.join(' ');
  return line.length > 600 ? `${line.slice(0, 600)}…` : line;
}

/** Standard traits only the target's catalog has (a newer os-traits than the reference's). */
async function traitsOnlyTargetHas(reference: PlacementClient, target: PlacementClient): Promise<Set<string>> {
  const names = async (placement: PlacementClient) => new Set(((await placement.get('/traits', { version: '1.6' })).body?.traits ?? []) as string[]);
  const [referenceTraits, targetTraits] = await Promise.all([names(reference), names(target)]);
  return new Set([...targetTraits].filter((name) => !name.startsWith('CUSTOM_') && !referenceTraits.has(name)));
}

/** The tree roots (from upstream's listing) as the normalised answers name providers: a generated uuid by its shared placeholder. */
function aliased(rootOf: ReadonlyMap<string, string>, side: Side): Map<string, string> {
  const name = (uuid: string) => side.aliases.get(uuid) ?? uuid;
  return new Map([...rootOf].map(([uuid, root]) => [name(uuid), name(root)]));
}

async function compareStep(
  step: Step,
  both: Both,
  sides: { reference: Side; target: Side },
  options: CompareOptions,
  upstream: PlacementClient,
): Promise<{ differences: string[]; fault?: string }> {
  const reference = normaliseAnswer(both.reference, sides.reference, options);
  const target = normaliseAnswer(both.target, sides.target, options);
  if (!step.limited) {
    const differences = compareNormalised(reference, target);
    const fault = differences.length > 0 ? UPSTREAM_FAULTS.find((known) => known.applies(step.request, reference)) : undefined;
    if (!fault) return { differences };
    const asked = fault.ask ? normaliseAnswer(await send(upstream, fault.ask(step.request)), sides.reference, options) : undefined;
    return { differences: fault.compare(step.request, reference, target, asked), fault: fault.name };
  }
  const { limit, unlimited, rootOf } = step.limited;
  const sideBySide = compareNormalised(withoutCandidates(reference), withoutCandidates(target));
  const fault = sideBySide.length > 0 ? UPSTREAM_FAULTS.find((known) => known.limitedToo && known.applies(step.request, reference)) : undefined;
  return {
    fault: fault?.name,
    differences: [
      ...(fault ? fault.compare(step.request, reference, target) : sideBySide),
      ...checkLimited(reference, normaliseAnswer(unlimited.reference, sides.reference, options), limit, aliased(rootOf, sides.reference)).map(
        (line) => `reference: ${line}`,
      ),
      ...checkLimited(target, normaliseAnswer(unlimited.target, sides.target, options), limit, aliased(rootOf, sides.reference)).map(
        (line) => `target: ${line}`,
      ),
    ],
  };
}

export async function runDifftest(options: RunOptions): Promise<RunReport> {
  // As nova's python-requests asks: both sides' answers are compared decoded (compare.ts).
  const headers = { 'accept-encoding': 'gzip, deflate' };
  const reference = new PlacementClient(options.reference, { token: 'admin', headers });
  const target = new PlacementClient(options.target, { token: 'admin', headers });
  await Promise.all([resetService(reference), resetService(target)]);
  const ignoredTraits = await traitsOnlyTargetHas(reference, target);
  const compareOptions: CompareOptions = { ignoredTraits };
  const sides = {
    reference: { baseUrl: reference.baseUrl, aliases: new Map<string, string>() },
    target: { baseUrl: target.baseUrl, aliases: new Map<string, string>() },
  };

  const random = new Random(options.seed);
  const context = { random, model: new Model(random), profile: options.profile, renamesInUse: !options.withoutRenamesInUse };
  const report: RunReport = {
    profile: options.profile,
    seed: options.seed,
    passed: 0,
    failed: 0,
    mismatches: [],
    byOperation: new Map(),
    routes: new Set(),
    versions: new Set(),
    hostile: 0,
    ignoredTraits: [...ignoredTraits].sort(),
    tolerated: new Map(),
  };
  let index = 0;
  /** Consumers the run's claims named: those holding nothing are removed from both services at the end. */
  const claimed = new Set<string>();
  while (index < options.ops) {
    const { name, steps } = nextOperation(context);
    let next = steps.next();
    while (!next.done && index < options.ops) {
      const step = next.value;
      index++;
      const [referenceAnswer, targetAnswer] = await Promise.all([send(reference, step.request), send(target, step.request)]);
      const both = { reference: referenceAnswer, target: targetAnswer };
      if (step.generatesUuid) {
        const [referenceUuid, targetUuid] = [generatedUuid(referenceAnswer, step.request), generatedUuid(targetAnswer, step.request)];
        if (referenceUuid && targetUuid) {
          const placeholder = `<generated-${sides.reference.aliases.size + 1}>`;
          sides.reference.aliases.set(referenceUuid, placeholder);
          sides.target.aliases.set(targetUuid, placeholder);
        }
      }
      for (const consumer of step.request.json === undefined ? [] : consumersLeftBehind(step.request)) claimed.add(consumer);
      options.onStep?.(`${options.profile}#${index} [${name}] ${describe(step.request)} -> ${referenceAnswer.status} / ${targetAnswer.status}`);
      const { differences, fault } = await compareStep(step, both, sides, compareOptions, reference);
      if (fault && differences.length === 0) report.tolerated.set(fault, (report.tolerated.get(fault) ?? 0) + 1);
      const tally = report.byOperation.get(name) ?? { requests: 0, failed: 0 };
      tally.requests++;
      const route = routeOf(step.request);
      if (route) report.routes.add(route);
      if (step.request.version !== null && VERSIONS.includes(step.request.version)) report.versions.add(step.request.version);
      if (name === 'hostile') report.hostile++;
      if (differences.length === 0) report.passed++;
      else {
        report.failed++;
        tally.failed++;
        const mismatch = { index, operation: name, request: step.request, differences };
        report.mismatches.push(mismatch);
        const allowing = fault ? ` (allowing for upstream's ${fault})` : '';
        options.onMismatch?.(
          `MISMATCH ${options.profile}#${index} [${name}] ${describe(step.request)}${allowing} :: ${differences.join(' | ').slice(0, 1500)}`,
        );
      }
      report.byOperation.set(name, tally);
      next = steps.next(both);
    }
  }
  // A claim of nothing for a new consumer leaves it behind, with no allocations, on both
  // services; no reset through the API could find it for the next run of the same seed.
  for (const consumer of claimed) await Promise.all([send(reference, removeLeftBehindConsumer(consumer)), send(target, removeLeftBehindConsumer(consumer))]);
  return report;
}
