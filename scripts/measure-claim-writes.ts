/**
 * `npm run claim-writes`: what a claim writes in a table at storage format 2
 * and at format 3, computed from the items the service writes for it
 * (DynamoDB Local misreports transactions' units: cost-report/claim-units.ts),
 * on average over every instance of the synthetic region's first 40 nodes
 * (the varied shape) placed one after the other: nova's three-class claims
 * on flat compute nodes, and claims on nested trees (CPU and memory on a
 * NUMA cell, a VF on its NIC). A claim is one TransactWriteItems at either
 * format: the capacity entries it moves are in it, a delete and a put each
 * time the room it leaves changes its entry's key.
 */
import { claimItems, claimsInOrder, itemBytes, transactionWriteUnits } from './cost-report/claim-units.js';
import { SyntheticRegion, VARIED_SHAPE } from './synthetic-region/region.js';

const NODES = 40;
const claims = claimsInOrder(new SyntheticRegion(VARIED_SHAPE), NODES);
const kinds = [
  { name: "nova's claim of VCPU, MEMORY_MB and DISK_GB on a flat node", held: (providers: number) => providers === 1 },
  { name: 'a claim on a nested tree (NUMA cell, its NIC, the node)', held: (providers: number) => providers > 1 },
];

console.log(`Per claim, the mean over the claims of each kind on the varied synthetic region's first ${NODES} nodes\n`);
console.log('| claim | claims | format | items written | of them capacity entries | bytes | write units |');
console.log('|---|---|---|---|---|---|---|');
for (const { name, held } of kinds) {
  const ofKind = claims.filter((claim) => held(claim.after.length));
  for (const format of [2, 3]) {
    const written = ofKind.map((claim) => claimItems(claim, format));
    const mean = (measure: (items: (typeof written)[number]) => number) => (written.reduce((sum, items) => sum + measure(items), 0) / ofKind.length).toFixed(2);
    const entries = mean((items) => items.filter((item) => item.type === 'capacityEntry').length);
    const bytes = mean((items) => items.reduce((sum: number, item) => sum + itemBytes(item), 0));
    console.log(`| ${name} | ${ofKind.length} | ${format} | ${mean((items) => items.length)} | ${entries} | ${bytes} | ${mean(transactionWriteUnits)} |`);
  }
}
