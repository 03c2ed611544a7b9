/**
 * `npm run preflight -- --region R [--profile P] [-c key=value]...`: before
 * a first `cdk deploy`, asks the account and the region what the deploy
 * needs (scripts/preflight/checks.ts) and prints what to fix. The context
 * is the deploy's: cdk.json's, then each `-c` (frontDoor, reservedConcurrency,
 * keystoneUrl...). Exits 1 when something must be fixed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SSMClient } from '@aws-sdk/client-ssm';
import { STSClient } from '@aws-sdk/client-sts';
import { App } from 'aws-cdk-lib';
import { PROJECT_ROOT } from '../../infra/bundling.js';
import { readSettings } from '../../infra/settings.js';
import { formatFindings, preflight } from './checks.js';

const { values } = parseArgs({
  options: {
    region: { type: 'string' },
    profile: { type: 'string' },
    context: { type: 'string', short: 'c', multiple: true, default: [] },
  },
});
if (!values.region) {
  console.error('usage: npm run preflight -- --region R [--profile P] [-c key=value]...');
  process.exit(2);
}
const region = values.region;
const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
const context: Record<string, unknown> = { ...cdkJson.context };
for (const assignment of values.context) {
  const equals = assignment.indexOf('=');
  if (equals <= 0) throw new Error(`-c ${assignment}: expected key=value`);
  context[assignment.slice(0, equals)] = assignment.slice(equals + 1);
}
// Checked here rather than refused, so that the report lists it with the rest.
const settings = readSettings(new App({ context: { ...context, regions: region } }).node);
const config = { region, profile: values.profile };
const findings = await preflight(settings, region, { lambda: new LambdaClient(config), ssm: new SSMClient(config), sts: new STSClient(config), fetch });
console.log(formatFindings(region, findings));
process.exitCode = findings.every((finding) => finding.ok) ? 0 : 1;
