/** Synthesizes the CDK app in-process with bundling skipped (CDK's own bundling-stacks context), as `cdk synth` would. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addPlacementStacks } from '../../infra/placement-app.js';
import { PROJECT_ROOT } from '../../infra/bundling.js';

/** cdk.json's context (the feature flags among it), which `cdk synth` applies to every synth. */
export const CDK_JSON_CONTEXT = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

const TEST_CONTEXT = {
  // No stack needs its assets bundled: the functions' code is not what these tests look at.
  'aws:cdk:bundling-stacks': [],
  regions: 'us-east-1,eu-west-1',
  stage: 'test',
  keystoneUrl: 'https://keystone.example.test/v3',
};

export function synth(context: Record<string, unknown> = {}) {
  const app = new App({ context: { ...CDK_JSON_CONTEXT, ...TEST_CONTEXT, ...context } });
  const stacks = addPlacementStacks(app);
  return { stacks, templates: stacks.map((stack) => Template.fromStack(stack)) };
}

export type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string };

export function resources(template: Template, type: string): [string, Resource][] {
  return Object.entries(template.findResources(type)) as [string, Resource][];
}
