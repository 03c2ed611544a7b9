/**
 * placement-admin explain: why GET /allocation_candidates answers what it
 * does ("No valid host"), from this service's GET
 * /explain/allocation_candidates (upstream has no such route): each
 * constraint with what remained before and after it, nova's
 * "(start: N, end: M)" form.
 */
import type { Explanation, ExplanationStep } from '../../shared/domain/candidate-explanation.js';
import { command } from '../command-line.js';
import { connect, expectStatus } from '../endpoint.js';
import { THIS_SERVICE_URL, TOKEN } from './options.js';

/** Rows of "constraint  (start: N, end: M)", the first one starting at `start`; a count not taken (null) is a dash. */
function rows(steps: ExplanationStep[], start: number | null, emptied: string | undefined): string[] {
  const width = Math.max(0, ...steps.map((step) => step.constraint.length));
  const count = (value: number | null) => (value === null ? '-' : String(value));
  let before = start;
  return steps.map(({ constraint, remaining }) => {
    const line = `    ${constraint.padEnd(width)}  (start: ${count(before)}, end: ${count(remaining)})${constraint === emptied ? '  <- nothing remained' : ''}`;
    before = remaining;
    return line;
  });
}

function formatExplanation(query: string, explanation: Explanation): string {
  const { emptiedBy } = explanation;
  const where = (suffix: string | null) => (suffix === null ? 'combining the groups' : suffix === '' ? 'the unsuffixed group' : `group "${suffix}"`);
  const verdict = emptiedBy === null ? '' : `, emptied by ${emptiedBy.constraint} (${where(emptiedBy.suffix)})`;
  const lines = [`GET /allocation_candidates?${query}`, `${explanation.candidates} allocation candidates${verdict}`, ''];
  for (const group of explanation.groups) {
    const emptied = emptiedBy?.suffix === group.suffix ? emptiedBy.constraint : undefined;
    // Where the entries answered, no provider was read: the counts start nowhere.
    const start = group.steps.some((step) => step.remaining === null) ? null : explanation.providers;
    lines.push(`  providers, ${where(group.suffix)}:`, ...rows(group.steps, start, emptied));
  }
  const lastGroup = explanation.groups.at(-1)?.steps.at(-1)?.remaining ?? 0;
  const emptied = emptiedBy?.suffix === null ? emptiedBy.constraint : undefined;
  // The first combining count starts from placements, which the explanation does not count: shown as a dash.
  lines.push(
    '  candidates, combining the groups:',
    ...rows(explanation.combined, lastGroup, emptied).map((line, n) => (n === 0 ? line.replace(/start: (\d+|-)/, 'start: -') : line)),
  );
  return lines.join('\n');
}

export const explain = command({
  name: 'explain',
  summary: 'why an allocation candidates query finds what it finds: what each constraint removes',
  synopsis: '--url URL [--token T] [--microversion V] [--json] QUERY',
  description: [
    'QUERY is the query string of GET /allocation_candidates, e.g.',
    "'resources=VCPU:4,MEMORY_MB:8192&required=HW_CPU_X86_AVX2'. Asks the service's",
    'GET /explain/allocation_candidates (this service only; admins by default) and prints, per request group,',
    'how many providers remain after each of its constraints, then how many candidates remain after each',
    'constraint that combines the groups, and the first constraint after which nothing remained.',
    'docs/operators/explain.md says what each count means.',
  ].join('\n'),
  argument: 'QUERY',
  options: {
    url: THIS_SERVICE_URL,
    token: TOKEN,
    microversion: { type: 'string', value: 'V', help: "the query's microversion, as the scheduler sent it (default: the highest both know)" },
    json: { type: 'boolean', help: 'print the explanation as JSON: candidates, groups, combined, emptiedBy' },
  },
  run: async (values, argument) => {
    const query = argument!.replace(/^\?/, '');
    const endpoint = await connect(values.url!, values.token);
    const client = values.microversion === undefined ? endpoint.client : endpoint.client.with({ version: values.microversion });
    const path = `/explain/allocation_candidates?${query}`;
    const explanation = expectStatus(await client.get(path), [200], `GET ${path}`).body as Explanation;
    const { candidates, groups, combined, emptiedBy } = explanation;
    console.log(values.json ? JSON.stringify({ candidates, groups, combined, emptiedBy }) : formatExplanation(query, explanation));
    return 0;
  },
});
