/**
 * How the differential tester compares two services' answers to the same
 * request. Only what the Placement API does not promise is normalised away:
 * request ids, dates, the service's own base URL, uuids a service generated
 * itself (each side's mapped to the same placeholder), the order of lists
 * (every list in Placement's answers is a set: providers, traits,
 * aggregates, candidates, links), the layout of the JSON text and its
 * transfer: bodies are compared decoded, and a compressed answer's
 * content-encoding and the Accept-Encoding its Vary names are transport.
 * Everything else, status, every other header, every value, must be equal.
 */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** What one side's answers are read with. */
export interface Side {
  /** The side's base URL, as it appears in Location headers. */
  baseUrl: string;
  /** uuids this side generated itself, mapped to a placeholder shared with the other side. */
  aliases: Map<string, string>;
}

export interface CompareOptions {
  /** Standard traits only one side's catalog has (a newer os-traits): left out of both answers. */
  ignoredTraits?: ReadonlySet<string>;
}

/** A normalised answer: what must be equal on both sides. */
export interface Normalised {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Headers about the connection or the byte layout of the body, not about the API. */
const TRANSPORT_HEADERS = new Set(['date', 'server', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-encoding']);
const REQUEST_ID = /^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REQUEST_ID_ANYWHERE = /req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

function replaceAliases(text: string, side: Side): string {
  let result = text;
  for (const [uuid, placeholder] of side.aliases) result = result.split(uuid).join(placeholder);
  return result;
}

function normaliseString(value: string, side: Side): string {
  return replaceAliases(value.replace(REQUEST_ID_ANYWHERE, '<request-id>'), side);
}

/** Canonical JSON text: object keys sorted, so equal values give equal text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function normaliseJson(value: unknown, side: Side, options: CompareOptions = {}): unknown {
  if (typeof value === 'string') return normaliseString(value, side);
  if (Array.isArray(value)) {
    const items = value.filter((item) => !(typeof item === 'string' && options.ignoredTraits?.has(item))).map((item) => normaliseJson(item, side, options));
    return items.sort((a, b) => (canonical(a) < canonical(b) ? -1 : canonical(a) > canonical(b) ? 1 : 0));
  }
  if (value !== null && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) result[normaliseString(key, side)] = normaliseJson(item, side, options);
    return result;
  }
  return value;
}

/** Vary without Accept-Encoding (a transfer matter); undefined when nothing else is left. */
function withoutAcceptEncoding(vary: string): string | undefined {
  const rest = vary
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '' && name.toLowerCase() !== 'accept-encoding');
  return rest.length === 0 ? undefined : rest.join(', ');
}

function normaliseHeader(name: string, value: string, side: Side): string {
  if (name === 'last-modified') return HTTP_DATE.test(value) ? '<http-date>' : value;
  if (name === 'x-openstack-request-id' || name === 'openstack-request-id') return REQUEST_ID.test(value) ? '<request-id>' : value;
  if (name === 'location' && value.startsWith(side.baseUrl)) return replaceAliases(`<base-url>${value.slice(side.baseUrl.length)}`, side);
  return replaceAliases(value, side);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export function normaliseAnswer(answer: Answer, side: Side, options: CompareOptions = {}): Normalised {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    const kept = lower === 'vary' ? withoutAcceptEncoding(value) : value;
    if (!TRANSPORT_HEADERS.has(lower) && kept !== undefined) headers[lower] = normaliseHeader(lower, kept, side);
  });
  const json = answer.headers.get('content-type')?.startsWith('application/json') ? parseJson(answer.text) : { ok: false as const };
  const body = json.ok ? normaliseJson(json.value, side, options) : normaliseString(answer.text.split(side.baseUrl).join('<base-url>'), side);
  return { status: answer.status, headers, body };
}

function show(value: unknown): string {
  const text = value === undefined ? '(absent)' : JSON.stringify(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/**
 * The structural differences between two normalised values, one line per
 * difference with its JSON path. Lists are compared as multisets: the
 * items only one side has are named.
 */
function structuralDiff(reference: unknown, target: unknown, path = '$'): string[] {
  if (Array.isArray(reference) && Array.isArray(target)) {
    const remaining = new Map<string, number>();
    for (const item of target) remaining.set(canonical(item), (remaining.get(canonical(item)) ?? 0) + 1);
    const missing: unknown[] = [];
    for (const item of reference) {
      const key = canonical(item);
      const count = remaining.get(key) ?? 0;
      if (count > 0) remaining.set(key, count - 1);
      else missing.push(item);
    }
    const extra = target.filter((item) => {
      const key = canonical(item);
      const count = remaining.get(key) ?? 0;
      if (count === 0) return false;
      remaining.set(key, count - 1);
      return true;
    });
    if (missing.length === 1 && extra.length === 1) return structuralDiff(missing[0], extra[0], `${path}[~]`);
    return [...missing.map((item) => `${path}[]: only reference has ${show(item)}`), ...extra.map((item) => `${path}[]: only target has ${show(item)}`)];
  }
  if (
    reference !== null &&
    target !== null &&
    typeof reference === 'object' &&
    typeof target === 'object' &&
    !Array.isArray(reference) &&
    !Array.isArray(target)
  ) {
    const keys = [...new Set([...Object.keys(reference), ...Object.keys(target)])].sort();
    return keys.flatMap((key) => structuralDiff((reference as Record<string, unknown>)[key], (target as Record<string, unknown>)[key], `${path}.${key}`));
  }
  return canonical(reference) === canonical(target) ? [] : [`${path}: reference ${show(reference)}, target ${show(target)}`];
}

/** The differences between two normalised answers (empty: they agree). */
export function compareNormalised(reference: Normalised, target: Normalised): string[] {
  const differences: string[] = [];
  if (reference.status !== target.status) differences.push(`status: reference ${reference.status}, target ${target.status}`);
  differences.push(...structuralDiff(reference.headers, target.headers, 'headers'));
  differences.push(...structuralDiff(reference.body, target.body, 'body'));
  return differences;
}

/**
 * An answer to `GET /allocation_candidates` with `limit`: which candidates
 * come back is the service's choice, so each side's answer is checked
 * against the unlimited answer (already compared between the sides) instead
 * of against the other side: `min(limit, all)` candidates, each one of the
 * unlimited answer's, and the provider summaries upstream keeps (those of
 * every tree a returned candidate uses, as in the unlimited answer).
 * Returns the differences of this side; the rest of the answer (status,
 * headers) is compared between the sides as usual.
 */
export function checkLimited(limited: Normalised, unlimited: Normalised, limit: number, rootOf: ReadonlyMap<string, string>): string[] {
  if (limited.status !== 200 || unlimited.status !== 200)
    return limited.status === unlimited.status ? [] : [`status ${limited.status}, unlimited ${unlimited.status}`];
  const body = limited.body as { allocation_requests?: unknown[]; provider_summaries?: Record<string, unknown> };
  const all = unlimited.body as { allocation_requests?: unknown[]; provider_summaries?: Record<string, unknown> };
  const problems: string[] = [];
  const candidates = body.allocation_requests ?? [];
  const allCandidates = all.allocation_requests ?? [];
  const expectedCount = Math.min(limit, allCandidates.length);
  if (candidates.length !== expectedCount) problems.push(`${candidates.length} candidates, expected ${expectedCount}`);
  const known = new Set(allCandidates.map(canonical));
  for (const candidate of candidates) if (!known.has(canonical(candidate))) problems.push(`candidate not in the unlimited answer: ${show(candidate)}`);
  const roots = new Set<string>();
  for (const candidate of candidates) for (const uuid of providersOf(candidate)) roots.add(rootOf.get(uuid) ?? uuid);
  const expectedSummaries = Object.fromEntries(
    Object.entries(all.provider_summaries ?? {}).filter(([uuid]) => candidates.length === allCandidates.length || roots.has(rootOf.get(uuid) ?? uuid)),
  );
  problems.push(...structuralDiff(expectedSummaries, body.provider_summaries ?? {}, 'provider_summaries'));
  return problems;
}

/** The provider uuids one allocation request uses (list form before 1.12, dict form after). */
export function providersOf(candidate: unknown): string[] {
  const allocations = (candidate as { allocations?: unknown }).allocations;
  if (Array.isArray(allocations)) return allocations.map((item) => (item as { resource_provider: { uuid: string } }).resource_provider.uuid);
  return Object.keys((allocations as Record<string, unknown>) ?? {});
}

/** The limited answer with its candidates and summaries taken out, for the side-by-side comparison of the rest. */
export function withoutCandidates(answer: Normalised): Normalised {
  if (answer.status !== 200 || answer.body === null || typeof answer.body !== 'object') return answer;
  const { allocation_requests: _candidates, provider_summaries: _summaries, ...rest } = answer.body as Record<string, unknown>;
  return { ...answer, body: rest };
}
