/** The stacks of one deployment stage: one per region named by context. */
import type { App } from 'aws-cdk-lib';
import { PlacementStack } from './placement-stack.js';
import { deploymentProblems, readSettings } from './settings.js';

export function addPlacementStacks(app: App): PlacementStack[] {
  const settings = readSettings(app.node);
  const [problem] = deploymentProblems(settings);
  if (problem !== undefined) throw new Error(problem);
  return settings.regions.map(
    (region) =>
      new PlacementStack(app, `Placement-${settings.stage}-${region}`, {
        env: { account: settings.account, region },
        description: `OpenStack Placement (${settings.stage}, ${region})`,
        settings,
      }),
  );
}
