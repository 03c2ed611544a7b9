// The conformance ratchet: fails when a test listed in the baseline no longer passes.
// Usage: node scripts/check-conformance.mjs results.json baseline.txt [--write]
import { readFileSync, writeFileSync } from 'node:fs';

const [resultsFile, baselineFile, mode] = process.argv.slice(2);
const results = JSON.parse(readFileSync(resultsFile, 'utf8'));
const passed = new Set(results.results.flatMap((file) => file.tests.filter((test) => test.status === 'passed').map((test) => `${file.file} :: ${test.name}`)));
if (mode === '--write') {
  writeFileSync(baselineFile, [...passed].sort().join('\n') + '\n');
  console.log(`baseline written: ${passed.size} passing tests`);
  process.exit(0);
}
const baseline = readFileSync(baselineFile, 'utf8').split('\n').filter(Boolean);
const regressions = baseline.filter((name) => !passed.has(name));
console.log(`conformance: ${passed.size} passing now, baseline ${baseline.length}, regressions ${regressions.length}`);
for (const name of regressions) console.log(`  REGRESSION ${name}`);
process.exit(regressions.length === 0 ? 0 : 1);
