/**
 * The preflight against recorded AWS answers (aws-sdk-client-mock): never
 * against AWS. The answers are shaped as Lambda's GetAccountSettings, SSM's
 * GetParameter and GetParametersByPath and STS's GetCallerIdentity return
 * them; Keystone's is its version document.
 */
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetParameterCommand, GetParametersByPathCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { App } from 'aws-cdk-lib';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { addPlacementStacks } from '../../../infra/placement-app.js';
import { readSettings } from '../../../infra/settings.js';
import { formatFindings, preflight, REQUIRED_BOOTSTRAP_VERSION } from '../../../scripts/preflight/checks.js';

const lambda = mockClient(LambdaClient);
const ssm = mockClient(SSMClient);
const sts = mockClient(STSClient);
afterEach(() => {
  lambda.reset();
  ssm.reset();
  sts.reset();
});

const ACCOUNT = '123456789012';
/** The services a region's global-infrastructure parameters list (a few of the 300-odd). */
const ALL_SERVICES = ['apigateway', 'cloudformation', 'cloudwatch', 'dynamodb', 'events', 'lambda', 'logs', 's3', 'secretsmanager', 'sns', 'ssm', 'sqs', 'ec2'];
/** A Keystone's answer to GET /v3. */
const KEYSTONE_V3 = {
  version: { id: 'v3.14', status: 'stable', updated: '2020-04-07T00:00:00Z', links: [{ rel: 'self', href: 'https://keystone.example.com/v3/' }] },
};

interface Account {
  concurrency?: { total: number; unreserved: number };
  bootstrapVersion?: string;
  services?: string[];
}

/** Records one account and region's answers. */
function record(region: string, account: Account = {}) {
  const { total, unreserved } = account.concurrency ?? { total: 1000, unreserved: 1000 };
  sts.on(GetCallerIdentityCommand).resolves({ Account: ACCOUNT, Arn: `arn:aws:iam::${ACCOUNT}:user/operator`, UserId: 'AIDAEXAMPLE' });
  lambda.on(GetAccountSettingsCommand).resolves({
    AccountLimit: {
      ConcurrentExecutions: total,
      UnreservedConcurrentExecutions: unreserved,
      TotalCodeSize: 80530636800,
      CodeSizeUnzipped: 262144000,
      CodeSizeZipped: 52428800,
    },
    AccountUsage: { TotalCodeSize: 0, FunctionCount: 0 },
  });
  if (account.bootstrapVersion === undefined) {
    ssm.on(GetParameterCommand).rejects(new ParameterNotFound({ message: 'Parameter /cdk-bootstrap/hnb659fds/version not found.', $metadata: {} }));
  } else {
    ssm
      .on(GetParameterCommand)
      .resolves({ Parameter: { Name: '/cdk-bootstrap/hnb659fds/version', Type: 'String', Value: account.bootstrapVersion, Version: 1 } });
  }
  // Two pages, as SSM answers ten parameters at a time.
  const parameters = (account.services ?? ALL_SERVICES).map((service) => ({
    Name: `/aws/service/global-infrastructure/regions/${region}/services/${service}`,
    Type: 'String' as const,
    Value: service,
  }));
  ssm
    .on(GetParametersByPathCommand, { NextToken: undefined })
    .resolves({ Parameters: parameters.slice(0, 10), NextToken: parameters.length > 10 ? 'page-2' : undefined })
    .on(GetParametersByPathCommand, { NextToken: 'page-2' })
    .resolves({ Parameters: parameters.slice(10) });
}

const keystoneAnswers: typeof fetch = async () => new Response(JSON.stringify(KEYSTONE_V3), { status: 200, headers: { 'content-type': 'application/json' } });

async function report(region: string, context: Record<string, string>, fetcher: typeof fetch = keystoneAnswers) {
  const settings = readSettings(new App({ context: { keystoneUrl: 'https://keystone.example.com/v3', ...context, regions: region } }).node);
  const findings = await preflight(settings, region, {
    lambda: new LambdaClient({ region }),
    ssm: new SSMClient({ region }),
    sts: new STSClient({ region }),
    fetch: fetcher,
  });
  return { findings, text: formatFindings(region, findings) };
}

describe('the preflight', () => {
  it('passes a bootstrapped account with the default quota, in a region with every service, Keystone answering', async () => {
    record('eu-west-1', { bootstrapVersion: '28' });
    const { findings, text } = await report('eu-west-1', {});
    expect(findings.every((finding) => finding.ok)).toBe(true);
    expect(text).toContain('Nothing to fix: cdk deploy can go ahead.');
    expect(text).toContain(`bootstrap stack version 28 (${REQUIRED_BOOTSTRAP_VERSION} needed)`);
    expect(text).toContain("https://keystone.example.com/v3 answered 200 with Keystone's version document (v3.14)");
  });

  it('reports an account with a reduced concurrency quota: the brake cannot be reserved, the default deploys', async () => {
    record('us-east-1', { concurrency: { total: 10, unreserved: 10 }, bootstrapVersion: '28' });
    const sized = await report('us-east-1', { reservedConcurrency: 'sized' });
    expect(sized.text).toMatchInlineSnapshot(`
      "Preflight for us-east-1:
        ok   credentials: account 123456789012 as arn:aws:iam::123456789012:user/operator
        FAIL concurrency quota: the account may run 10 concurrent executions, 10 of them unreserved; this stack reserves 184: Lambda refuses a reservation that leaves fewer than 100 unreserved, so every function's creation would fail and the stack roll back
        ok   CDK bootstrap: bootstrap stack version 28 (6 needed)
        ok   region services: us-east-1 offers every service frontDoor=httpApi needs (cloudformation, s3, ssm, lambda, apigateway, dynamodb, secretsmanager, logs, cloudwatch, sns, events)
        ok   Keystone: https://keystone.example.com/v3 answered 200 with Keystone's version document (v3.14)

      To fix before cdk deploy:
        - concurrency quota: deploy without reservations (drop -c reservedConcurrency, the default) or reserve less, or ask for a concurrency quota of at least 284 (Service Quotas, AWS Lambda, "Concurrent executions", L-B99A9384)"
    `);
    const unreserved = await report('us-east-1', {});
    expect(unreserved.findings.every((finding) => finding.ok)).toBe(true);
    expect(unreserved.text).toContain('the quota is below the default 1,000');
  });

  it('reports a region without function URLs for the function-URL front door', async () => {
    record('eu-central-2', { bootstrapVersion: '28' });
    const { text } = await report('eu-central-2', { frontDoor: 'functionUrl' });
    expect(text).toMatchInlineSnapshot(`
      "Preflight for eu-central-2:
        ok   credentials: account 123456789012 as arn:aws:iam::123456789012:user/operator
        ok   concurrency quota: the account may run 1000 concurrent executions, 1000 of them unreserved; this stack reserves 0 (the functions draw on the unreserved pool)
        ok   CDK bootstrap: bootstrap stack version 28 (6 needed)
        FAIL region services: eu-central-2 has no Lambda function URLs, which frontDoor=functionUrl needs
        ok   Keystone: https://keystone.example.com/v3 answered 200 with Keystone's version document (v3.14)

      To fix before cdk deploy:
        - region services: choose another region or deploy with the HTTP API (-c frontDoor=httpApi) (docs/operators/deploy.md, "Regions")"
    `);
    expect((await report('eu-central-2', {})).findings.every((finding) => finding.ok)).toBe(true);
  });

  it('reports a region that lacks a service the front door needs', async () => {
    record('ap-southeast-7', { bootstrapVersion: '28', services: ALL_SERVICES.filter((service) => service !== 'apigateway') });
    const { findings } = await report('ap-southeast-7', {});
    expect(findings.find((finding) => finding.check === 'region services')).toMatchObject({
      ok: false,
      detail: 'ap-southeast-7 has no apigateway, which frontDoor=httpApi needs',
    });
  });

  it('reports a Keystone deployment without keystoneUrl, and an account not bootstrapped', async () => {
    record('eu-west-1');
    const { text } = await report('eu-west-1', { keystoneUrl: '' });
    expect(text).toMatchInlineSnapshot(`
      "Preflight for eu-west-1:
        ok   credentials: account 123456789012 as arn:aws:iam::123456789012:user/operator
        ok   concurrency quota: the account may run 1000 concurrent executions, 1000 of them unreserved; this stack reserves 0 (the functions draw on the unreserved pool)
        FAIL CDK bootstrap: eu-west-1 of account 123456789012 is not bootstrapped (no /cdk-bootstrap/hnb659fds/version)
        ok   region services: eu-west-1 offers every service frontDoor=httpApi needs (cloudformation, s3, ssm, lambda, apigateway, dynamodb, secretsmanager, logs, cloudwatch, sns, events)
        FAIL Keystone: no keystoneUrl: synth refuses it, as every function would refuse to start

      To fix before cdk deploy:
        - CDK bootstrap: npx cdk bootstrap aws://123456789012/eu-west-1
        - Keystone: add -c keystoneUrl=https://keystone.example.com/v3 (the endpoint the functions validate tokens with, reachable from the internet)"
    `);
  });

  it('reports a Keystone that does not answer, or answers something else', async () => {
    record('eu-west-1', { bootstrapVersion: '5' });
    const down = await report('eu-west-1', {}, async () => {
      throw new TypeError('fetch failed');
    });
    expect(down.findings.find((finding) => finding.check === 'Keystone')).toMatchObject({
      ok: false,
      detail: 'https://keystone.example.com/v3 did not answer from here (TypeError: fetch failed)',
    });
    expect(down.findings.find((finding) => finding.check === 'CDK bootstrap')).toMatchObject({
      ok: false,
      fix: `npx cdk bootstrap aws://${ACCOUNT}/eu-west-1`,
    });
    const other = await report('eu-west-1', {}, async () => new Response('<html>login</html>', { status: 200 }));
    expect(other.findings.find((finding) => finding.check === 'Keystone')).toMatchObject({ ok: false });
  });

  it('asks for the bootstrap version the synthesized stack requires', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], regions: 'us-east-1', keystoneUrl: 'https://keystone.example.com/v3' } });
    const [stack] = addPlacementStacks(app);
    expect(app.synth().getStackByName(stack!.stackName).requiresBootstrapStackVersion).toBe(REQUIRED_BOOTSTRAP_VERSION);
  });

  it('stops at credentials that AWS refuses', async () => {
    sts
      .on(GetCallerIdentityCommand)
      .rejects(Object.assign(new Error('The security token included in the request is invalid.'), { name: 'InvalidClientTokenId' }));
    const { findings } = await report('eu-west-1', {});
    expect(findings).toEqual([
      {
        check: 'credentials',
        ok: false,
        detail: 'could not ask AWS: InvalidClientTokenId: The security token included in the request is invalid.',
        fix: 'check the credentials (--profile) and that the region is enabled for the account',
      },
    ]);
  });
});
