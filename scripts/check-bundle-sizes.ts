/**
 * CI's size check of what deploys: every function the front door calls on a
 * request (the handlers, the authorizer, the function URL's router) must be
 * under its size target, the figure docs/operators/deploy.md gives.
 *
 *   npx tsx scripts/check-bundle-sizes.ts ASSEMBLY...
 *
 * Each ASSEMBLY is a `cdk synth` output directory of one stack; prints each
 * request-path function's size (all files of its asset) and exits 1 when
 * one is over. `npm run bundle-report` measures the same sizes with the
 * cold starts.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readStack, stackNames, type FrontDoor } from '../local/bundles/cloud-assembly.js';
import { REQUEST_PATH_TARGET_KB } from './lib/bundle-targets.js';

/** The functions the front door invokes for a request. */
function requestPathFunctions(frontDoor: FrontDoor): Set<string> {
  if (frontDoor.kind === 'functionUrl') return new Set([frontDoor.functionId]);
  const ids = frontDoor.routes.map((route) => route.functionId);
  return new Set(frontDoor.authorizer ? [...ids, frontDoor.authorizer.functionId] : ids);
}

const kilobytes = (directory: string) => readdirSync(directory).reduce((sum, name) => sum + statSync(join(directory, name)).size, 0) / 1024;

const assemblies = process.argv.slice(2);
if (assemblies.length === 0) {
  console.error('usage: tsx scripts/check-bundle-sizes.ts ASSEMBLY...');
  process.exit(2);
}
let over = 0;
console.log(`| stack | function | KB | under ${REQUEST_PATH_TARGET_KB} KB |\n|---|---|---|---|`);
for (const assembly of assemblies) {
  for (const stackName of stackNames(assembly)) {
    const stack = readStack(assembly, stackName, { tableName: 'table', accountId: '000000000000' });
    for (const id of requestPathFunctions(stack.frontDoor)) {
      const size = kilobytes(stack.functions.get(id)!.codeDirectory);
      const within = size < REQUEST_PATH_TARGET_KB;
      if (!within) over++;
      console.log(
        `| ${stackName} (${stack.frontDoor.kind}) | ${stack.functions.get(id)!.description ?? id} | ${size.toFixed(0)} | ${within ? 'yes' : '**no**'} |`,
      );
    }
  }
}
if (over > 0) {
  console.error(`${over} request-path bundle(s) over ${REQUEST_PATH_TARGET_KB} KB`);
  process.exit(1);
}
