/**
 * The synthetic region as a region file, for placement-admin import and
 * verify (docs/operators/region-copy.md, "Measured"):
 *
 *   npx tsx scripts/synthetic-region/main.ts --compute-nodes 200 [--seed 7] [--shape varied|default] > region.jsonl
 */
import { parseArgs } from 'node:util';
import { regionFileLines } from '../../admin/region-copy/region-file.js';
import { DEFAULT_SHAPE, SyntheticRegion, VARIED_SHAPE } from './region.js';

const SHAPES = { default: DEFAULT_SHAPE, varied: VARIED_SHAPE };

const { values } = parseArgs({ options: { 'compute-nodes': { type: 'string' }, seed: { type: 'string' }, shape: { type: 'string' } } });
const shape = SHAPES[(values.shape ?? 'varied') as keyof typeof SHAPES];
if (shape === undefined) throw new Error(`--shape is one of ${Object.keys(SHAPES).join(', ')}`);
const nodes = Number(values['compute-nodes'] ?? 100);
const region = new SyntheticRegion({ ...shape, seed: Number(values.seed ?? shape.seed) }).build(nodes);
const header = { created_at: new Date().toISOString(), source: `synthetic region, ${nodes} compute nodes`, microversion: '1.39' };
for (const line of regionFileLines(region, header)) process.stdout.write(`${line}\n`);
