/**
 * cdk-nag's AwsSolutions pack against the stack of every context variant the
 * deployment guide documents, both front doors: no finding may remain; the
 * few that are by design are acknowledged in the stack's code, each with
 * its reason (Validations.of(...).acknowledge).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stage } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { synth } from '../support/synth.js';

const policyFile = join(mkdtempSync(join(tmpdir(), 'nag-')), 'policy.yaml');
writeFileSync(policyFile, '"placement:traits:list": "@"\n');

const VARIANTS: Record<string, Record<string, unknown>> = {
  default: {},
  'auth=noauth2': { auth: 'noauth2' },
  'keystoneSecret by name': { keystoneSecret: 'placement/keystone' },
  'keystoneSecret by ARN': { keystoneSecret: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:placement-AbCdEf' },
  'authorizerCacheTtlSeconds=0': { authorizerCacheTtlSeconds: 0 },
  'CORS (environment)': { environment: '{"PLACEMENT_CORS_ALLOWED_ORIGIN":"https://dashboard.example.com"}' },
  'secure RBAC (environment)': { environment: '{"PLACEMENT_ENFORCE_SCOPE":"true","PLACEMENT_ENFORCE_NEW_DEFAULTS":"true"}' },
  policyFile: { policyFile },
  'reservedConcurrency=sized': { reservedConcurrency: 'sized' },
  'reservedConcurrency per function': { reservedConcurrency: '{"allocations": 50, "default": "none"}' },
  'memory and timeout': { memoryMb: '{"default": 512, "allocation-candidates": 2048}', timeoutSeconds: 20 },
  'brakes for 5,000 nodes': { computeNodes: 5000, instancesPerNode: 40, throttleRateLimit: 6000, throttleBurstLimit: 5000 },
  alarmEmail: { alarmEmail: 'ops@example.com', serverErrorAlarmPercent: 2, p99LatencyAlarmMs: 2000 },
  'capacityMetrics=false': { capacityMetrics: false },
  capacityMetricsMinutes: { capacityMetricsMinutes: 15 },
  'logs: retention and system level': { logRetentionDays: 90, systemLogLevel: 'INFO' },
  'accessLog=true': { accessLog: true },
  'account and stage': { account: '123456789012', stage: 'prod' },
  'capacity=provisioned': { capacity: 'provisioned' },
  'capacity=provisioned, target and region size': { capacity: 'provisioned', capacityTargetPercent: 50, computeNodes: 5000, instancesPerNode: 40 },
};

describe.each(['httpApi', 'functionUrl'])('cdk-nag AwsSolutions, frontDoor=%s', (frontDoor) => {
  it.each(Object.keys(VARIANTS))('finds nothing unacknowledged: %s', (variant) => {
    const { stacks } = synth({ frontDoor, ...VARIANTS[variant] });
    const checks = new AwsSolutionsChecks(Stage.of(stacks[0]!));
    for (const stack of stacks) {
      const findings = checks
        .validateScope(stack)
        .violations.flatMap((violation) =>
          violation.violatingResources.map((resource) => `${violation.ruleName} at ${resource.constructPath}: ${violation.description}`),
        );
      expect(findings, stack.stackName).toEqual([]);
    }
  });
});
