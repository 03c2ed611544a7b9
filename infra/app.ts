/** CDK entry point (cdk.json): `npx cdk synth -c stage=dev -c regions=us-east-1,eu-west-1`. */
import { App } from 'aws-cdk-lib';
import { addPlacementStacks } from './placement-app.js';

const app = new App();
addPlacementStacks(app);
app.synth();
