/**
 * `npm run difftest -- --reference URL --target URL [--seed N] [--ops N] [--profile flat|nested|sharing|mixed[,…]] [--without-renames-in-use]`
 *
 * Sends one seeded sequence of requests per profile to both services (each
 * emptied first) and compares the answers. Prints one line per mismatch, a
 * table per operation kind, and `N passed, M failed`; exits 1 on any
 * mismatch.
 */
import { parseArgs } from 'node:util';
import { UPSTREAM_ROUTES } from '../../shared/http/routes.js';
import { runDifftest, type RunReport } from './run.js';
import { PROFILES, VERSIONS, type Profile } from './scenario.js';

const USAGE =
  'usage: npm run difftest -- --reference URL --target URL [--seed N] [--ops N] [--profile flat|nested|sharing|mixed|all, comma-separated] [--without-renames-in-use] [--verbose]';

function parse() {
  const { values } = parseArgs({
    options: {
      reference: { type: 'string' },
      target: { type: 'string' },
      seed: { type: 'string', default: '1' },
      ops: { type: 'string', default: '1000' },
      profile: { type: 'string', default: 'mixed' },
      'without-renames-in-use': { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
    },
  });
  const seed = Number(values.seed);
  const ops = Number(values.ops);
  const profiles = (values.profile === 'all' ? PROFILES.join(',') : values.profile).split(',') as Profile[];
  if (
    !values.reference ||
    !values.target ||
    !Number.isInteger(seed) ||
    !Number.isInteger(ops) ||
    ops < 1 ||
    profiles.some((profile) => !PROFILES.includes(profile))
  ) {
    console.error(USAGE);
    process.exit(2);
  }
  return {
    reference: values.reference,
    target: values.target,
    seed,
    ops,
    profiles,
    withoutRenamesInUse: values['without-renames-in-use'],
    verbose: values.verbose,
  };
}

function table(report: RunReport): string {
  const rows = [...report.byOperation.entries()].sort(([a], [b]) => a.localeCompare(b));
  const lines = ['| operation | requests | passed | failed |', '|---|---|---|---|'];
  for (const [name, tally] of rows) lines.push(`| ${name} | ${tally.requests} | ${tally.requests - tally.failed} | ${tally.failed} |`);
  return lines.join('\n');
}

const options = parse();
let passed = 0;
let failed = 0;
const routes = new Set<string>();
const versions = new Set<string>();
for (const profile of options.profiles) {
  const started = performance.now();
  const report = await runDifftest({
    ...options,
    profile,
    onMismatch: (line) => console.log(line),
    onStep: options.verbose ? (line) => console.log(line) : undefined,
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `\nprofile ${profile}, seed ${options.seed}: ${report.passed} passed, ${report.failed} failed in ${seconds} s; ${report.hostile} malformed or hostile requests (${((100 * report.hostile) / (report.passed + report.failed)).toFixed(1)}%)`,
  );
  for (const [fault, count] of report.tolerated)
    console.log(`tolerated ${count}: upstream's ${fault} (docs/compatibility.md); the target checked against the right answer`);
  if (report.ignoredTraits.length > 0) console.log(`ignored ${report.ignoredTraits.length} standard traits only the target's catalog has`);
  console.log(table(report));
  passed += report.passed;
  failed += report.failed;
  for (const route of report.routes) routes.add(route);
  for (const version of report.versions) versions.add(version);
}
const missingRoutes = UPSTREAM_ROUTES.map((route) => `${route.method} ${route.path}`).filter((key) => !routes.has(key));
console.log(
  `\nroutes exercised: ${routes.size}/${UPSTREAM_ROUTES.length}${missingRoutes.length ? ` (not: ${missingRoutes.join(', ')})` : ''}; microversions: ${versions.size}/${VERSIONS.length}`,
);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
