/**
 * `npm run cost-report`: what one scheduling decision costs, measured from
 * the handlers' own embedded-metric records. Starts `npm start` (PORT,
 * default 8792) with metrics on, creates compute-node providers, then makes
 * scheduling decisions one at a time as nova-scheduler does: GET
 * /allocation_candidates, then PUT /allocations for a candidate it picked.
 * Reads the DynamoDB units and handler latency of every request from the
 * server's stdout (what CloudWatch would get) and prices them with the
 * us-east-1 list prices below, for the function sizes the stack deploys.
 *
 *   COST_PROVIDERS (default 100) compute nodes, COST_DECISIONS (default 300).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { App } from 'aws-cdk-lib';
import { readSettings } from '../infra/settings.js';
import type { HandlerName } from '../shared/http/routes.js';

const PORT = Number(process.env.PORT ?? 8792);
const PROVIDERS = Number(process.env.COST_PROVIDERS ?? 100);
const DECISIONS = Number(process.env.COST_DECISIONS ?? 300);

/** us-east-1 list prices (USD), checked when this was written; the README table is computed with them. */
const PRICES = {
  dynamoReadUnit: 0.125 / 1e6,
  dynamoWriteUnit: 0.625 / 1e6,
  lambdaRequest: 0.2 / 1e6,
  lambdaArmGbSecond: 0.0000133334,
  httpApiRequest: 1.0 / 1e6,
  /** HTTP API meters requests in 512 KB steps. */
  httpApiMeterBytes: 512 * 1024,
  logsIngestedGb: 0.5,
};
/**
 * API Gateway's access-log line per request (`npm run log-report`), ingested
 * with our record; Lambda writes no START/END/REPORT lines at the stack's
 * system log level (WARN).
 */
const PLATFORM_LOG_BYTES = 220;

interface RequestRecord {
  route: string;
  status: number;
  Latency: number;
  ReadCapacityUnits: number;
  WriteCapacityUnits: number;
  bytes: number;
}

const server = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
  env: { ...process.env, PORT: String(PORT), PLACEMENT_METRICS: 'true', PLACEMENT_STAGE: 'cost-report', PLACEMENT_AUTH_STRATEGY: 'noauth2' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const records: RequestRecord[] = [];
const listening = new Promise<void>((resolve, reject) => {
  server.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  createInterface({ input: server.stdout! }).on('line', (line) => {
    if (line.startsWith('Placement listening')) resolve();
    if (!line.includes('"_aws"')) return;
    const record = JSON.parse(line) as Omit<RequestRecord, 'bytes'>;
    // The authorizer's record (when it writes one) is not a Placement request.
    if (record.route) records.push({ ...record, bytes: Buffer.byteLength(line) + 1 });
  });
});
await listening;

const base = `http://127.0.0.1:${PORT}`;
const headers = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'content-type': 'application/json' };
const responseBytes = new Map<string, number[]>();
async function call(route: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  responseBytes.set(route, [...(responseBytes.get(route) ?? []), Buffer.byteLength(text)]);
  return text ? JSON.parse(text) : undefined;
}

try {
  for (let n = 0; n < PROVIDERS; n++) {
    const uuid = randomUUID();
    await call('setup', 'POST', '/resource_providers', { uuid, name: `compute-${n}` });
    await call('setup', 'PUT', `/resource_providers/${uuid}/inventories`, {
      resource_provider_generation: 0,
      inventories: {
        VCPU: { total: 64, allocation_ratio: 4 },
        MEMORY_MB: { total: 262144, reserved: 4096 },
        DISK_GB: { total: 2000 },
      },
    });
    // One node in ten is disabled, which the scheduler's request filters out.
    const traits = n % 10 === 0 ? ['HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED'] : ['HW_CPU_X86_AVX2'];
    await call('setup', 'PUT', `/resource_providers/${uuid}/traits`, { resource_provider_generation: 1, traits });
  }
  const measuredFrom = records.length;
  for (let n = 0; n < DECISIONS; n++) {
    // nova's request for a 2 vCPU / 4 GB / 20 GB flavor, 1000 = nova's default max_placement_results.
    const candidates = await call(
      'GET /allocation_candidates',
      'GET',
      '/allocation_candidates?resources=VCPU:2,MEMORY_MB:4096,DISK_GB:20&required=!COMPUTE_STATUS_DISABLED&limit=1000',
    );
    const requests = candidates.allocation_requests as { allocations: Record<string, { resources: Record<string, number> }> }[];
    const chosen = requests[Math.floor(Math.random() * requests.length)]!;
    await call('PUT /allocations/{consumer_uuid}', 'PUT', `/allocations/${randomUUID()}`, {
      allocations: chosen.allocations,
      project_id: 'cost-report',
      user_id: 'cost-report',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    });
  }
  // Records arrive on the server's stdout after the response: let the last ones in.
  await new Promise((resolve) => setTimeout(resolve, 500));

  const settings = readSettings(new App().node);
  const decisionRoutes: [string, HandlerName][] = [
    ['GET /allocation_candidates', 'allocation-candidates'],
    ['PUT /allocations/{consumer_uuid}', 'allocations'],
  ];
  const measured = records.slice(measuredFrom);
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;

  console.log(`\n${DECISIONS} scheduling decisions over ${PROVIDERS} compute nodes, one at a time, local server on DynamoDB Local\n`);
  console.log(
    '| request | read units | write units | handler ms mean / p50 / p99 | memory MB | response KB | log bytes | USD per million: DynamoDB | Lambda | HTTP API | logs | total |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  let perMillion = 0;
  const perMillionParts = { dynamo: 0, lambda: 0, api: 0, logs: 0 };
  for (const [route, family] of decisionRoutes) {
    const rows = measured.filter((record) => record.route === route);
    const read = mean(rows.map((row) => row.ReadCapacityUnits));
    const write = mean(rows.map((row) => row.WriteCapacityUnits));
    const latencies = rows.map((row) => row.Latency);
    const memoryGb = settings.functions[family].memoryMb / 1024;
    const sizes = responseBytes.get(route)!;
    const logBytes = mean(rows.map((row) => row.bytes)) + PLATFORM_LOG_BYTES;
    const dynamo = 1e6 * (read * PRICES.dynamoReadUnit + write * PRICES.dynamoWriteUnit);
    // Lambda bills whole milliseconds; the mean of the rounded-up latencies is the mean billed duration.
    const lambda = 1e6 * (PRICES.lambdaRequest + memoryGb * (mean(latencies.map(Math.ceil)) / 1000) * PRICES.lambdaArmGbSecond);
    const api = 1e6 * PRICES.httpApiRequest * mean(sizes.map((size) => Math.max(1, Math.ceil(size / PRICES.httpApiMeterBytes))));
    const logs = 1e6 * (logBytes / 1e9) * PRICES.logsIngestedGb;
    perMillionParts.dynamo += dynamo;
    perMillionParts.lambda += lambda;
    perMillionParts.api += api;
    perMillionParts.logs += logs;
    perMillion += dynamo + lambda + api + logs;
    const dollars = [dynamo, lambda, api, logs, dynamo + lambda + api + logs].map((value) => value.toFixed(2)).join(' | ');
    console.log(
      `| ${route} | ${read.toFixed(2)} | ${write.toFixed(2)} | ${mean(latencies).toFixed(1)} / ${pct(latencies, 50).toFixed(1)} / ${pct(latencies, 99).toFixed(1)} | ` +
        `${settings.functions[family].memoryMb} | ${(mean(sizes) / 1024).toFixed(1)} | ${logBytes.toFixed(0)} | ${dollars} |`,
    );
  }
  const statuses = [...new Set(measured.map((record) => `${record.route} ${record.status}`))];
  console.log(
    `\nPer million decisions: ${perMillion.toFixed(2)} USD = DynamoDB ${perMillionParts.dynamo.toFixed(2)} + Lambda ${perMillionParts.lambda.toFixed(2)} + HTTP API ${perMillionParts.api.toFixed(2)} + logs ${perMillionParts.logs.toFixed(2)}`,
  );
  console.log(`Statuses seen: ${statuses.join(', ')}.`);
} finally {
  server.kill('SIGTERM');
}
