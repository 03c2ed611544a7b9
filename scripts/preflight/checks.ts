/**
 * The preflight's checks (`npm run preflight`): what a first `cdk deploy`
 * of these settings needs of the account and the region, asked of AWS
 * before CloudFormation finds out halfway through and rolls back. Each
 * check gives a finding: passed, or failed with what to do.
 */
import { GetAccountSettingsCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { GetParameterCommand, GetParametersByPathCommand, ParameterNotFound, type SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, type STSClient } from '@aws-sdk/client-sts';
import { knownMissing, SERVICES } from '../../infra/front-doors.js';
import type { PlacementSettings } from '../../infra/settings.js';

/** Lambda refuses a reservation that leaves an account fewer unreserved concurrent executions than this. */
export const MIN_UNRESERVED = 100;
/** The bootstrap stack version CDK's default synthesizer requires (requiresBootstrapStackVersion in cdk.out's manifest). */
export const REQUIRED_BOOTSTRAP_VERSION = 6;
const BOOTSTRAP_VERSION_PARAMETER = '/cdk-bootstrap/hnb659fds/version';
/** How long Keystone may take to answer its version document. */
const KEYSTONE_TIMEOUT_MS = 5000;

export interface Finding {
  check: string;
  ok: boolean;
  /** What was found. */
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

export interface Clients {
  lambda: LambdaClient;
  ssm: SSMClient;
  sts: STSClient;
  /** Keystone is asked over HTTP (fetch), as the functions will ask it. */
  fetch: typeof fetch;
}

/** What the stack reserves of the account's concurrency: the functions of the chosen front door. */
export function reservedBy(settings: PlacementSettings): number {
  const names = settings.frontDoor === 'functionUrl' ? ['router'] : Object.keys(settings.functions).filter((name) => name !== 'router');
  return names.reduce((sum, name) => sum + (settings.functions[name as keyof PlacementSettings['functions']].reservedConcurrency ?? 0), 0);
}

const message = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

async function concurrency(settings: PlacementSettings, clients: Clients): Promise<Finding> {
  const check = 'concurrency quota';
  const { AccountLimit: limit } = await clients.lambda.send(new GetAccountSettingsCommand({}));
  const total = limit?.ConcurrentExecutions ?? 0;
  const unreserved = limit?.UnreservedConcurrentExecutions ?? 0;
  const reserved = reservedBy(settings);
  const found = `the account may run ${total} concurrent executions, ${unreserved} of them unreserved; this stack reserves ${reserved}`;
  if (reserved === 0) {
    return total >= 1000
      ? { check, ok: true, detail: `${found} (the functions draw on the unreserved pool)` }
      : {
          check,
          ok: true,
          detail: `${found}; the quota is below the default 1,000 (a new account's), so all the functions share ${unreserved} executions and reservedConcurrency=sized cannot be used yet`,
        };
  }
  if (unreserved - reserved >= MIN_UNRESERVED) return { check, ok: true, detail: `${found}, leaving ${unreserved - reserved} unreserved` };
  return {
    check,
    ok: false,
    detail: `${found}: Lambda refuses a reservation that leaves fewer than ${MIN_UNRESERVED} unreserved, so every function's creation would fail and the stack roll back`,
    fix:
      `deploy without reservations (drop -c reservedConcurrency, the default) or reserve less, ` +
      `or ask for a concurrency quota of at least ${total - unreserved + reserved + MIN_UNRESERVED} ` +
      `(Service Quotas, AWS Lambda, "Concurrent executions", L-B99A9384)`,
  };
}

async function bootstrap(account: string, region: string, clients: Clients): Promise<Finding> {
  const check = 'CDK bootstrap';
  const command = `npx cdk bootstrap aws://${account}/${region}`;
  try {
    const { Parameter } = await clients.ssm.send(new GetParameterCommand({ Name: BOOTSTRAP_VERSION_PARAMETER }));
    const version = Number(Parameter?.Value);
    if (version >= REQUIRED_BOOTSTRAP_VERSION) return { check, ok: true, detail: `bootstrap stack version ${version} (${REQUIRED_BOOTSTRAP_VERSION} needed)` };
    return {
      check,
      ok: false,
      detail: `bootstrap stack version ${Parameter?.Value}, older than the ${REQUIRED_BOOTSTRAP_VERSION} this CDK needs`,
      fix: command,
    };
  } catch (error) {
    if (error instanceof ParameterNotFound) {
      return { check, ok: false, detail: `${region} of account ${account} is not bootstrapped (no ${BOOTSTRAP_VERSION_PARAMETER})`, fix: command };
    }
    throw error;
  }
}

async function services(settings: PlacementSettings, region: string, clients: Clients): Promise<Finding> {
  const check = 'region services';
  const path = `/aws/service/global-infrastructure/regions/${region}/services`;
  const offered = new Set<string>();
  let NextToken: string | undefined;
  do {
    const page = await clients.ssm.send(new GetParametersByPathCommand({ Path: path, NextToken }));
    for (const parameter of page.Parameters ?? []) offered.add(parameter.Value ?? parameter.Name?.split('/').pop() ?? '');
    NextToken = page.NextToken;
  } while (NextToken);
  const missing = [...SERVICES[settings.frontDoor].filter((service) => !offered.has(service)), ...knownMissing(region, settings.frontDoor)];
  if (missing.length === 0)
    return { check, ok: true, detail: `${region} offers every service frontDoor=${settings.frontDoor} needs (${SERVICES[settings.frontDoor].join(', ')})` };
  const other = settings.frontDoor === 'functionUrl' ? ' or deploy with the HTTP API (-c frontDoor=httpApi)' : '';
  return {
    check,
    ok: false,
    detail: `${region} has no ${missing.join(', ')}, which frontDoor=${settings.frontDoor} needs`,
    fix: `choose another region${other} (docs/operators/deploy.md, "Regions")`,
  };
}

async function keystone(settings: PlacementSettings, clients: Clients): Promise<Finding> {
  const check = 'Keystone';
  const url = settings.auth.keystoneUrl;
  if (settings.auth.strategy !== 'keystone') return { check, ok: true, detail: 'auth=noauth2: no Keystone (anyone who reaches the API is an admin)' };
  if (url === undefined) {
    return {
      check,
      ok: false,
      detail: 'no keystoneUrl: synth refuses it, as every function would refuse to start',
      fix: 'add -c keystoneUrl=https://keystone.example.com/v3 (the endpoint the functions validate tokens with, reachable from the internet)',
    };
  }
  try {
    const response = await clients.fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(KEYSTONE_TIMEOUT_MS) });
    const body = (await response.json().catch(() => undefined)) as { version?: { id?: string }; versions?: unknown } | undefined;
    if (response.status < 400 && body !== undefined && (body.version !== undefined || body.versions !== undefined)) {
      return {
        check,
        ok: true,
        detail: `${url} answered ${response.status} with Keystone's version document${body.version?.id ? ` (${body.version.id})` : ''}`,
      };
    }
    return {
      check,
      ok: false,
      detail: `${url} answered ${response.status}, not with Keystone's version document`,
      fix: "set keystoneUrl to Keystone's public endpoint (…/v3)",
    };
  } catch (error) {
    return {
      check,
      ok: false,
      detail: `${url} did not answer from here (${message(error)})`,
      fix: 'check the URL and that Keystone is reachable from the internet, where the functions run (they are not in a VPC)',
    };
  }
}

/** Every check, in the order an operator meets them; a check that cannot ask AWS fails with the reason. */
export async function preflight(settings: PlacementSettings, region: string, clients: Clients): Promise<Finding[]> {
  const guarded = async (check: string, run: () => Promise<Finding>): Promise<Finding> => {
    try {
      return await run();
    } catch (error) {
      return {
        check,
        ok: false,
        detail: `could not ask AWS: ${message(error)}`,
        fix: 'check the credentials (--profile) and that the region is enabled for the account',
      };
    }
  };
  const identity = await guarded('credentials', async () => {
    const { Account, Arn } = await clients.sts.send(new GetCallerIdentityCommand({}));
    return { check: 'credentials', ok: true, detail: `account ${Account} as ${Arn}` };
  });
  if (!identity.ok) return [identity];
  const account = /^account (\d+)/.exec(identity.detail)?.[1] ?? 'ACCOUNT';
  return [
    identity,
    await guarded('concurrency quota', () => concurrency(settings, clients)),
    await guarded('CDK bootstrap', () => bootstrap(account, region, clients)),
    await guarded('region services', () => services(settings, region, clients)),
    await keystone(settings, clients),
  ];
}

/** The report: one line per check, then what to fix. */
export function formatFindings(region: string, findings: Finding[]): string {
  const lines = [`Preflight for ${region}:`, ...findings.map((finding) => `  ${finding.ok ? 'ok  ' : 'FAIL'} ${finding.check}: ${finding.detail}`)];
  const failed = findings.filter((finding) => !finding.ok);
  if (failed.length === 0) lines.push('', 'Nothing to fix: cdk deploy can go ahead.');
  else lines.push('', 'To fix before cdk deploy:', ...failed.map((finding) => `  - ${finding.check}: ${finding.fix}`));
  return lines.join('\n');
}
