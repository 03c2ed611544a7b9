/** The benchmark's settings (environment variables) and the fixed shape of its cloud and requests. */
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SIZES = (process.env.BENCH_SIZES ?? '1000,10000').split(',').map(Number);
export const RUNS = Number(process.env.BENCH_RUNS ?? 20);
export const WARMUPS = 2;
export const INTERLEAVE = process.env.BENCH_INTERLEAVE !== '0';
export const SEED = Number(process.env.BENCH_SEED ?? 42);
export const REFERENCE_PORT = Number(process.env.BENCH_REFERENCE_PORT ?? 18788);
export const REFERENCE_STATE = join(tmpdir(), `bench-candidates-reference-${REFERENCE_PORT}`);
export const REFERENCE_SCRIPTS = join(dirname(fileURLToPath(import.meta.url)), '../../../shared/reference');
export const WIDE_TIMEOUT_MS = 120_000;

export const AGGREGATE_SIZE = 50;
export const SHARED_STORAGE_EVERY = 5;
export const NESTED_SHARE = 0.2;
export const PFS_PER_NESTED_NODE = 4;
export const INSTANCES_PER_NODE = 2;
export const PROJECT = 'bench-project';
export const USER = 'bench-user';
export const CONSUMER_TYPE = 'INSTANCE';

export const HEADERS = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };
export const FLAVOR = 'resources=VCPU:2,MEMORY_MB:4096,DISK_GB:40';

export const log = (message: string) => console.error(`[bench-candidates] ${message}`);
