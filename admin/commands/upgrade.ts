/**
 * placement-admin upgrade check / upgrade finalize: this service's
 * equivalent of upstream's `placement-status upgrade check` and of the last
 * step of `placement-manage db sync` (docs/operators/upgrade.md). Check
 * reports the table's storage format, the changes in flight and the release
 * each part of the region runs, and says the next safe step; finalize moves
 * the table to the newest format, and refuses while anything runs a release
 * that cannot read it.
 */
import { command, EXIT_DIFFERENCES, UsageError } from '../command-line.js';
import { PlacementClient } from '../placement-client.js';
import { FIRST_RELEASE, formatsOf, nextStep, type EntriesStatus, type NextStep, type RegionState, type Runner, type UpgradeStatus } from '../upgrade/region.js';
import { awsClients, stackReleases } from '../upgrade/stack-releases.js';

const OPTIONS = {
  url: {
    type: 'string',
    value: 'URL',
    multiple: true,
    required: true,
    help: 'a Placement endpoint of the region (repeat it for every one that may run its own release, such as the old and new local services)',
  },
  token: { type: 'string', value: 'T', help: 'X-Auth-Token of an admin (default: noauth2\'s "admin")' },
  stack: { type: 'string', value: 'NAME', help: "the region's CloudFormation stack: every function's release through the Lambda API" },
  region: { type: 'string', value: 'REGION', help: "the stack's AWS region (with --stack)" },
  json: { type: 'boolean', help: 'print the state and the next step as JSON' },
} as const;

type Values = { url: string[]; token?: string; stack?: string; region?: string };

/** What both commands take: the region's endpoints and, optionally, its stack. */
const REGION_ARGUMENTS = {
  synopsis: '--url URL [--url URL ...] [--stack NAME --region REGION] [options]',
  options: OPTIONS,
  check: checkOptions,
};

function checkOptions(values: { url: string[]; stack?: string; region?: string }): void {
  if (values.url.length === 0) throw new UsageError('--url URL is required');
  if ((values.stack === undefined) !== (values.region === undefined)) throw new UsageError('--stack and --region go together');
}

/** The region as it is now and the next safe step in it. */
async function regionAndStep(values: unknown): Promise<{ region: RegionState; step: NextStep }> {
  const region = await readRegion(values as Values);
  return { region, step: nextStep(region) };
}

/** Asks each URL for GET /upgrade: a 404 is a release from before the upgrade routes (1.0.0). */
async function readRegion(values: Values): Promise<RegionState> {
  const answers = await Promise.all(
    values.url.map(async (url) => {
      const client = new PlacementClient(url, { token: values.token ?? 'admin', version: '1.0', retries: 3 });
      const response = await client.get('/upgrade');
      if (response.status === 404) return { url, status: undefined };
      if (response.status !== 200) {
        const detail = response.body?.errors?.[0]?.detail ?? response.text.slice(0, 300);
        throw new Error(`${url}: GET /upgrade answered ${response.status}: ${String(detail).trim()}`);
      }
      return { url, status: response.body as UpgradeStatus };
    }),
  );
  const statuses = answers.flatMap((answer) => (answer.status ? [answer.status] : []));
  if (statuses.length === 0) throw new Error('no URL answered GET /upgrade: give the URL of a service of release 1.1.0 or later');
  // The newest release's view of the table: it knows every format the others do.
  const status = statuses.reduce((newest, candidate) =>
    Math.max(...candidate.storage_format.known) > Math.max(...newest.storage_format.known) ? candidate : newest,
  );
  const runners: Runner[] = answers.map(({ url, status: own }) =>
    own ? { name: url, release: own.release, known: own.storage_format.known } : { name: url, ...FIRST_RELEASE },
  );
  if (values.stack !== undefined) {
    runners.push(...(await stackReleases(awsClients(values.region!), values.stack, (release) => formatsOf(release, status))));
  }
  return { status, runners };
}

function describe({ status, runners }: RegionState, step: NextStep): string {
  const format = status.storage_format;
  const width = Math.max(...runners.map((runner) => runner.name.length), 'runs'.length);
  const finalized = format.finalized_at ? ` (set ${format.finalized_at} by release ${format.finalized_by ?? '?'})` : " (no record: release 1.0.0's)";
  const next = {
    finalize: `finalize: every part of the region reads storage format ${format.newest}; run "placement-admin upgrade finalize" with the same options`,
    wait: `wait: ${step.kind === 'wait' ? step.reason : ''}`,
    done: `nothing to do: ${step.kind === 'done' ? step.reason : ''}`,
    refused: `act now: ${step.kind === 'refused' ? step.reason : ''}`,
  }[step.kind];
  return [
    `storage format of the table: ${format.table}${finalized}`,
    `newest storage format (release ${status.release}): ${format.newest}`,
    `multi-step changes in flight: ${status.changes_in_flight}`,
    ...(status.entries ? [buildLine(status.entries)] : []),
    '',
    `${'runs'.padEnd(width)}  release  reads formats`,
    ...runners.map(
      (runner) => `${runner.name.padEnd(width)}  ${runner.release.padEnd(7)}  ${runner.known.join(', ')}${runner.updating ? '  (being updated)' : ''}`,
    ),
    '',
    `next step: ${next}`,
  ].join('\n');
}

export const upgradeCheck = command({
  name: 'upgrade check',
  summary: "an upgrade's state: the table's storage format, changes in flight, each part's release, the next safe step",
  ...REGION_ARGUMENTS,
  description: [
    'Asks each URL for GET /upgrade (a release from before 1.1.0 has no such route and counts as 1.0.0) and,',
    "with --stack, AWS for the release of every function of the region's stack. Prints the table's storage",
    'format, the multi-step changes in flight, what each part runs and the formats its release reads, and the',
    'next safe step: wait for the deploy, finalize, or nothing to do. Changes nothing.',
  ].join('\n'),
  run: async (values) => {
    const { region, step } = await regionAndStep(values);
    console.log(values.json ? JSON.stringify({ ...region, next: step }, null, 2) : describe(region, step));
    return 0;
  },
});

/** One line of the build's progress. */
function buildLine(entries: EntriesStatus): string {
  const done = `${entries.shards_done} of ${entries.shards} shards done, ${entries.providers} providers, ${entries.entries} entries, ${entries.write_units} write units`;
  if (entries.state === 'waiting') return `entries: waiting ${entries.waiting_seconds ?? '?'} s for ${entries.waiting_for ?? 'the build to start'} (${done})`;
  return `entries: ${entries.state} (${done})`;
}

const pause = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

export const upgradeFinalize = command({
  name: 'upgrade finalize',
  summary: 'moves the table to the newest storage format once every part of the region reads it, and builds its entries',
  ...REGION_ARGUMENTS,
  description: [
    'Checks the region as "upgrade check" does and, when every part of it runs a release that reads the newest',
    'storage format, moves the table to it (POST /upgrade/finalize to the first URL of that release). Refuses,',
    'with exit status 1 and the reason, while any part still runs an older release. To format 3 it then builds',
    "the new entries over the region's providers, calling the finalize again until they are built, a line of",
    'progress each time: first a wait of about a minute (until no function can write the older format), then',
    'a part of the build per call. Killed, it goes on from where the build got to when started again. After it,',
    'rolling back to a release that cannot read the new format needs the backup taken before the upgrade',
    '(docs/operators/upgrade.md).',
  ].join('\n'),
  run: async (values) => {
    const { region, step } = await regionAndStep(values);
    if (step.kind === 'done') {
      console.log(`nothing to do: ${step.reason}`);
      return 0;
    }
    if (step.kind !== 'finalize') {
      console.error(`upgrade finalize refused: ${step.reason}`);
      return EXIT_DIFFERENCES;
    }
    const url = region.runners.find((runner) => runner.release === region.status.release)!.name;
    const client = new PlacementClient(url, { token: (values as Values).token ?? 'admin', version: '1.0', retries: 3 });
    for (;;) {
      const response = await client.post('/upgrade/finalize', { format: step.to });
      if (response.status !== 200 && response.status !== 202) {
        console.error(`upgrade finalize: ${url} answered ${response.status}: ${response.body?.errors?.[0]?.detail ?? response.text}`);
        return EXIT_DIFFERENCES;
      }
      const after = response.body as UpgradeStatus;
      if (after.entries) console.error(buildLine(after.entries));
      if (response.status === 200) {
        console.log(`the table is at storage format ${after.storage_format.table} (finalized by release ${after.release})`);
        return 0;
      }
      if (after.entries?.state === 'waiting') await pause(Math.min(after.entries.waiting_seconds ?? 1, 5));
    }
  },
});

/** One answer of GET /upgrade/entries. */
interface VerifyAnswer {
  providers: number;
  entries: number;
  pending: number;
  disagreements: { provider: string; entry: string; subject: string; problem: string }[];
  next: string | null;
}

export const upgradeVerify = command({
  name: 'upgrade verify',
  summary: "reads the table's entries (capacity, traits, aggregates) against its providers and names each disagreement",
  synopsis: '--url URL [options]',
  options: {
    url: { type: 'string', value: 'URL', required: true, help: 'a Placement endpoint of the region (release 1.2.0 or later, finalized to storage format 3)' },
    token: OPTIONS.token,
    json: { type: 'boolean', help: 'print every disagreement and the totals as JSON' },
  },
  description: [
    'Reads, through GET /upgrade/entries a part at a time, every provider and the entries it should have (one',
    'capacity entry per class of its inventory, one per trait, its aggregates and sharing entries), then every',
    "capacity and trait holder entry and the provider it names. Prints each disagreement (the provider, the entry's",
    'key, what it says and what is wrong), a progress line per part on stderr, and the totals. Entries a committed',
    "change's cleanup has still to remove are counted as pending, not as disagreements. Exit status 1 when there",
    'is any disagreement. Changes nothing.',
  ].join('\n'),
  run: async (values) => {
    const { url, token, json } = values as { url: string; token?: string; json: boolean };
    const client = new PlacementClient(url, { token: token ?? 'admin', version: '1.0', retries: 3 });
    const total = { providers: 0, entries: 0, pending: 0, disagreements: [] as VerifyAnswer['disagreements'] };
    let marker: string | null | undefined;
    do {
      const response = await client.get(`/upgrade/entries${marker ? `?marker=${encodeURIComponent(marker)}` : ''}`);
      if (response.status !== 200) {
        console.error(`upgrade verify: ${url} answered ${response.status}: ${response.body?.errors?.[0]?.detail ?? response.text}`);
        return EXIT_DIFFERENCES;
      }
      const page = response.body as VerifyAnswer;
      total.providers += page.providers;
      total.entries += page.entries;
      total.pending += page.pending;
      total.disagreements.push(...page.disagreements);
      if (!json) for (const d of page.disagreements) console.log(`${d.provider}  ${d.subject}  ${d.entry}: ${d.problem}`);
      console.error(`verified ${total.providers} providers and ${total.entries} entries so far, ${total.disagreements.length} disagreements`);
      marker = page.next;
    } while (marker);
    if (json) console.log(JSON.stringify(total, null, 2));
    else
      console.log(
        `${total.providers} providers, ${total.entries} entries checked, ${total.pending} pending cleanup, ${total.disagreements.length} disagreements`,
      );
    return total.disagreements.length > 0 ? EXIT_DIFFERENCES : 0;
  },
});
