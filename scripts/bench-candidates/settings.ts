/** The benchmark's settings (environment variables) and the fixed shape of its cloud and requests. */
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SHAPE, type RegionShape } from '../synthetic-region/region.js';

export const SIZES = (process.env.BENCH_SIZES ?? '1000,10000').split(',').map(Number);
export const RUNS = Number(process.env.BENCH_RUNS ?? 20);
export const WARMUPS = 2;
export const INTERLEAVE = process.env.BENCH_INTERLEAVE !== '0';
/** BENCH_LOAD=api: both services loaded through their APIs (as an operator's region is), not below them. */
export const LOAD_THROUGH_API = process.env.BENCH_LOAD === 'api';
const SEED = Number(process.env.BENCH_SEED ?? 42);
export const REFERENCE_PORT = Number(process.env.BENCH_REFERENCE_PORT ?? 18788);
export const REFERENCE_STATE = join(tmpdir(), `bench-candidates-reference-${REFERENCE_PORT}`);
export const REFERENCE_SCRIPTS = join(dirname(fileURLToPath(import.meta.url)), '../../../shared/reference');
export const WIDE_TIMEOUT_MS = 120_000;
/** Children of the wide tree, one request group each: their orderings (8! = 40320) are the valid candidates. */
export const WIDE_CHILDREN = Number(process.env.BENCH_WIDE_CHILDREN ?? 8);

/**
 * The synthetic region in blocks of 50, a fifth of them aggregates with shared disk, a fifth of the nodes with four PFs
 * of 8 VFs, nodes with a few traits (the search reads them: the libvirt host's 60 would make every item 2 KB), two
 * instances a node.
 */
export const CLOUD_SHAPE: RegionShape = {
  ...DEFAULT_SHAPE,
  seed: SEED,
  instancesPerNode: 2,
  aggregateSize: 50,
  aggregatedShare: 0.2,
  nestedShare: 0.2,
  pfsPerNode: 4,
  vfsPerPf: 8,
  hostTraits: 'few',
};

// Accept-Encoding as nova's python-requests sends it: a large listing is compressed, never refused (shared/http/middleware/response-size.ts).
export const HEADERS = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'accept-encoding': 'gzip, deflate' };
export const FLAVOR = 'resources=VCPU:2,MEMORY_MB:4096,DISK_GB:40';

export const log = (message: string) => console.error(`[bench-candidates] ${message}`);
