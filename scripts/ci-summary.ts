/**
 * CI's closing summary (.ci/run): the time of each phase, then the slowest
 * test files of `npm test`, so that creep shows at every run.
 *
 *   npx tsx scripts/ci-summary.ts PHASES.tsv VITEST.json TOTAL_SECONDS
 *
 * PHASES.tsv holds one line per phase (name, tab, seconds) in the order the
 * phases ended; VITEST.json is vitest's JSON report (its per-file start and
 * end times).
 */
import { readFileSync } from 'node:fs';

const SLOWEST = 15;

const [phasesFile, vitestReport, totalSeconds] = process.argv.slice(2);
if (phasesFile === undefined || vitestReport === undefined || totalSeconds === undefined) {
  console.error('usage: tsx scripts/ci-summary.ts PHASES.tsv VITEST.json TOTAL_SECONDS');
  process.exit(2);
}

const phases = readFileSync(phasesFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => line.split('\t') as [string, string]);
console.log('\n[ci] phases (A: and B: ran side by side, so their times overlap)\n');
console.log('| phase | s |\n|---|---|');
for (const [name, seconds] of phases) console.log(`| ${name} | ${seconds} |`);
console.log(`| **total** | **${totalSeconds}** |`);

interface FileResult {
  name: string;
  startTime: number;
  endTime: number;
  assertionResults: unknown[];
}
let files: FileResult[] = [];
try {
  files = (JSON.parse(readFileSync(vitestReport, 'utf8')) as { testResults: FileResult[] }).testResults;
} catch {
  console.log(`\n[ci] no test report at ${vitestReport}`);
}
if (files.length > 0) {
  const root = `${process.cwd()}/`;
  const slowest = [...files].sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime)).slice(0, SLOWEST);
  console.log(`\n[ci] the ${SLOWEST} slowest of ${files.length} test files (wall time of each, its hooks included)\n`);
  console.log('| test file | tests | s |\n|---|---|---|');
  for (const file of slowest) {
    console.log(`| ${file.name.replace(root, '')} | ${file.assertionResults.length} | ${((file.endTime - file.startTime) / 1000).toFixed(1)} |`);
  }
}
