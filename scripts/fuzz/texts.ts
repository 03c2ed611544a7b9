/**
 * Text values by what they name: uuids, classes, traits, providers, group
 * suffixes, amounts, times, and the query languages the handlers parse
 * (resources, required, member_of, same_subtree, name filters). Each comes
 * twice: `clean`, names that exist (the fixture's) or could, so that a
 * request gets past its parsers to the code behind them; and `any`, the
 * clean ones mixed with names no parser takes and hostile text.
 */
import fc from 'fast-check';
import { FIXTURE, FIXTURE_PROVIDER_NAMES, FIXTURE_PROVIDERS, NEW_PROVIDERS } from './fixture.js';
import { HOSTILE_NUMBER_TEXTS, hostileText, PROTOTYPE_KEYS } from './values.js';

export interface Texts {
  clean: fc.Arbitrary<string>;
  any: fc.Arbitrary<string>;
}

/** Clean texts, and the same mixed with odd ones (one in `odds + 1`) and hostile text. */
function texts(clean: fc.Arbitrary<string>, odd?: fc.Arbitrary<string>, odds = 6): Texts {
  const others = odd === undefined ? hostileText : fc.oneof(odd, hostileText);
  return { clean, any: fc.oneof({ weight: odds, arbitrary: clean }, { weight: 1, arbitrary: others }) };
}

/** Other spellings of a uuid of 36 characters that the uuid rule takes for the same uuid: upper case, a dash moved. */
export const respellings = (uuid: string): string[] => [uuid.toUpperCase(), `${uuid.replace('-', '')}-`];

/** The same uuid written every way the uuid rule accepts or nearly accepts. */
const uuidForms = (uuid: string): string[] => [
  ...respellings(uuid),
  uuid.replaceAll('-', ''),
  `urn:uuid:${uuid}`,
  `{${uuid}}`,
  `${'urn:'.repeat(600)}${uuid}`,
  `${uuid}0`,
  uuid.slice(1),
];

/** The providers a clean POST creates or DELETE deletes: a few kept for it, now and then the fixture's (or a new one to create). */
export const newProviderUuid = texts(
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...NEW_PROVIDERS) },
    { weight: 1, arbitrary: fc.constantFrom(...FIXTURE_PROVIDERS) },
    { weight: 1, arbitrary: fc.uuid() },
  ),
  fc.constantFrom(...NEW_PROVIDERS.flatMap(uuidForms)),
  3,
);

export const providerUuid = texts(
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...FIXTURE_PROVIDERS) },
    { weight: 1, arbitrary: fc.constantFrom(...FIXTURE_PROVIDERS.map((uuid) => uuid.toUpperCase())) },
    { weight: 1, arbitrary: fc.uuid() },
  ),
  fc.constantFrom(...FIXTURE_PROVIDERS.flatMap(uuidForms)),
  3,
);

export const consumerUuid = texts(
  fc.oneof({ weight: 3, arbitrary: fc.constant(FIXTURE.consumer) }, { weight: 1, arbitrary: fc.uuid() }),
  fc.constantFrom(...uuidForms(FIXTURE.consumer)),
  3,
);

/** Any uuid a body or a filter holds: provider, consumer, aggregate. */
export const uuidText = texts(
  fc.oneof({ weight: 3, arbitrary: providerUuid.clean }, { weight: 1, arbitrary: fc.constant(FIXTURE.aggregate) }, { weight: 1, arbitrary: fc.uuid() }),
  fc.constantFrom(...uuidForms(FIXTURE.aggregate)),
);

export const classNames = texts(
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('VCPU', 'MEMORY_MB', 'DISK_GB', 'IPV4_ADDRESS', FIXTURE.customClass) },
    { weight: 1, arbitrary: fc.constantFrom('PCPU', 'CUSTOM_FUZZ_NEW') },
  ),
  fc.oneof(fc.stringMatching(/^[A-Z0-9_]+$/), fc.stringMatching(/^CUSTOM_[A-Z0-9_]{1,8}$/), fc.constantFrom(...PROTOTYPE_KEYS)),
  3,
);

/** Custom names a clean PUT creates and DELETE deletes (traits or classes): the spare nothing uses, mostly. */
export const spareNames = texts(
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(FIXTURE.spare) },
    { weight: 1, arbitrary: fc.constantFrom(FIXTURE.customTrait, FIXTURE.customClass, FIXTURE.newName) },
    { weight: 1, arbitrary: fc.stringMatching(/^CUSTOM_FUZZ_[A-Z]{1,2}$/) },
  ),
  fc.oneof(fc.stringMatching(/^[A-Z0-9_]+$/), fc.stringMatching(/^CUSTOM_[A-Z0-9_]{1,8}$/), fc.constantFrom('VCPU', 'HW_CPU_X86_AVX2', ...PROTOTYPE_KEYS)),
  3,
);

export const traitNames = texts(
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('HW_CPU_X86_AVX2', FIXTURE.customTrait, 'MISC_SHARES_VIA_AGGREGATE', 'HW_CPU_X86_SSE') },
    { weight: 1, arbitrary: fc.constant('CUSTOM_FUZZ_NEW') },
  ),
  fc.oneof(fc.stringMatching(/^CUSTOM_[A-Z0-9_]{1,8}$/), fc.constantFrom(...PROTOTYPE_KEYS)),
  3,
);

export const providerNames = texts(
  fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 99 }).map((n) => `fuzz-new-${n}`) },
    { weight: 1, arbitrary: fc.constantFrom(...FIXTURE_PROVIDER_NAMES) },
  ),
  undefined,
  2,
);

/** Request-group suffixes: those of 1.25 (numbers) and 1.33 (up to 64 of [a-zA-Z0-9_-]), and what neither allows. */
export const groupSuffixes = texts(
  fc.oneof({ weight: 6, arbitrary: fc.constantFrom('1', '2', '_a', '_b') }, { weight: 1, arbitrary: fc.constantFrom('x'.repeat(64), '-') }),
  fc.oneof(fc.constantFrom('0', '01', 'x'.repeat(65), '\u00e9', '.', ...PROTOTYPE_KEYS), fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/)),
);

export const amountText = texts(fc.integer({ min: 1, max: 4 }).map(String), fc.constantFrom(...HOSTILE_NUMBER_TEXTS), 4);

const list = (item: fc.Arbitrary<string>, max = 3) => fc.array(item, { minLength: 1, maxLength: max }).map((items) => items.join(','));

/** resources: CLASS:AMOUNT pairs, and pairs that are not. */
export const resourcesText = texts(
  list(fc.tuple(classNames.clean, amountText.clean).map(([name, amount]) => `${name}:${amount}`)),
  fc.oneof(
    list(fc.tuple(classNames.any, amountText.any).map(([name, amount]) => `${name}:${amount}`)),
    fc.constantFrom('VCPU', 'VCPU:1:2', ':1', 'VCPU:', ',', 'VCPU:1,', ',VCPU:1', `VCPU${':'.repeat(50)}1`),
  ),
  2,
);

const bang = (names: fc.Arbitrary<string>, marks: string[]) => fc.tuple(fc.constantFrom('', '', '', ...marks), names).map(([mark, name]) => `${mark}${name}`);

/** required, required<N>, root_required: trait lists; clean, with "!" from 1.22 and "in:" from 1.39 (`minor`). */
const requiredTexts = (minor: number): Texts =>
  texts(
    fc.oneof(
      { weight: 3, arbitrary: list(bang(traitNames.clean, minor >= 22 ? ['!'] : [])) },
      { weight: minor >= 39 ? 1 : 0, arbitrary: list(traitNames.clean).map((names) => `in:${names}`) },
    ),
    fc.oneof(
      list(bang(traitNames.any, ['!', '!!'])),
      list(traitNames.any).map((names) => `in:${names}`),
      fc.constantFrom('in:', 'in:,', '!', 'in:!HW_CPU_X86_AVX2', ',', 'HW_CPU_X86_AVX2,!HW_CPU_X86_AVX2'),
    ),
    2,
  );

/** The fixture's aggregate (now and then respelled, so that a list may name it twice), or another. */
const aggregates = (uuids: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(FIXTURE.aggregate) },
    { weight: 1, arbitrary: fc.constantFrom(...respellings(FIXTURE.aggregate)) },
    { weight: 1, arbitrary: uuids },
  );

/** member_of: aggregates, "in:" lists; clean, "!" only from 1.32 (`minor`). */
const memberOfTexts = (minor: number): Texts =>
  texts(
    fc.oneof(
      { weight: 3, arbitrary: aggregates(fc.uuid()) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom(...(minor >= 32 ? ['in:', '!in:', '!'] : ['in:'])), list(aggregates(fc.uuid())))
          .map(([prefix, uuids]) => `${prefix}${uuids}`),
      },
    ),
    fc.oneof(
      list(aggregates(uuidText.any)),
      fc.tuple(fc.constantFrom('in:', '!in:', '!', '!!'), list(aggregates(uuidText.any))).map(([p, u]) => `${p}${u}`),
    ),
    3,
  );

/** The texts that differ by microversion, made once per minor version. */
const byMinor = <T>(make: (minor: number) => T): ((minor: number) => T) => {
  const made = new Map<number, T>();
  return (minor) => {
    if (!made.has(minor)) made.set(minor, make(minor));
    return made.get(minor)!;
  };
};
const requiredText = byMinor(requiredTexts);
const memberOfText = byMinor(memberOfTexts);

export const sameSubtreeText = texts(list(groupSuffixes.clean), fc.oneof(list(groupSuffixes.any), fc.constantFrom('', ',', '_a,', ',_a')), 3);

/** GET /traits?name=: startswith: and in: filters. */
export const traitFilterText = texts(
  fc.tuple(fc.constantFrom('startswith:', 'in:'), list(traitNames.clean)).map(([op, names]) => `${op}${names}`),
  fc.oneof(
    fc.tuple(fc.constantFrom('startswith:', 'in:', 'regex:', ''), fc.oneof(hostileText, list(traitNames.any))).map(([op, text]) => `${op}${text}`),
    fc.constantFrom('startswith:', 'in:', 'startswith:HW_', 'startswith:%_'),
  ),
  3,
);

const pad = (n: number, width: number) => `${n < 0 ? '-' : ''}${String(Math.abs(n)).padStart(width, '0')}`;

/** A time of ISO 8601's shape with each part in or out of its range, and the years a Date cannot hold. */
const dates = (from: string, to: string) => fc.date({ min: new Date(from), max: new Date(to), noInvalidDate: true }).map((date) => date.toISOString());

/** since and until: clean, a range of years from the past (since) to the future (until), so that since comes first. */
const timeTexts = (clean: fc.Arbitrary<string>): Texts => texts(clean, oddTimes, 1);
const oddTimes: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .record({
        year: fc.oneof(
          { weight: 4, arbitrary: fc.integer({ min: 1969, max: 2030 }).map((y) => pad(y, 4)) },
          { weight: 1, arbitrary: fc.constantFrom('0000', '9999', '+275760', '+275761', '-271821', '-271822', '10000', '+002026', '99') },
        ),
        month: fc.integer({ min: -1, max: 14 }),
        day: fc.integer({ min: 0, max: 33 }),
        hour: fc.integer({ min: 0, max: 26 }),
        minute: fc.integer({ min: 0, max: 61 }),
        second: fc.integer({ min: 0, max: 62 }),
        fraction: fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{1,30}$/)),
        offset: fc.oneof(
          fc.constantFrom('Z', 'z', '', '+00:00', '-00:00', '+23:59', '-24:00', '+99:99', '+0530', '+05', '-25:00', 'UTC'),
          fc
            .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 70 }))
            .map(([s, h, m]) => `${s}${pad(h, 2)}:${pad(m, 2)}`),
        ),
      })
      .map((t) => `${t.year}-${pad(t.month, 2)}-${pad(t.day, 2)}T${pad(t.hour, 2)}:${pad(t.minute, 2)}:${pad(t.second, 2)}${t.fraction}${t.offset}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('2026-01-01', '2026-01-01 00:00:00Z', '2026-W01-1T00:00:00Z', '2026-001T00:00:00Z', 'now', '1767225600') },
  fc.constantFrom('2026-01-01T00:00:00Z', '2026-11-26T18:00:00.5+01:00'),
  dates('2000-01-01T00:00:00Z', '2040-01-01T00:00:00Z'),
);
export const sinceText = timeTexts(
  fc.oneof(fc.constantFrom('2020-02-29T12:00:00+01:00', '1970-01-01T00:00:00Z'), dates('2000-01-01T00:00:00Z', '2025-01-01T00:00:00Z')),
);
export const untilText = timeTexts(fc.oneof(fc.constant('2030-11-26T18:00:00.5+01:00'), dates('2030-01-01T00:00:00Z', '2040-01-01T00:00:00Z')));

const constants = (clean: string[], odd: string[]) => texts(fc.constantFrom(...clean), fc.constantFrom(...odd), 4);

/** The values of one query parameter, by its name (a request group's suffix taken off), route and microversion (its minor number). */
export function queryTexts(name: string, route: string, minor: number): Texts {
  const base = name.replace(/^(resources|required|member_of|in_tree).*$/, '$1');
  const specific: Record<string, Texts> = {
    resources: resourcesText,
    required: requiredText(minor),
    root_required: requiredText(minor),
    member_of: memberOfText(minor),
    in_tree: providerUuid,
    uuid: providerUuid,
    same_subtree: sameSubtreeText,
    group_policy: constants(['none', 'isolate'], ['None', 'isolate ', '', ...PROTOTYPE_KEYS]),
    limit: amountText,
    name: route === 'GET /traits' ? traitFilterText : texts(fc.constantFrom(...FIXTURE_PROVIDER_NAMES, 'fuzz-new-1')),
    associated: constants(['true', 'false'], ['True', '1', 'yes', '']),
    project_id: texts(fc.constantFrom(FIXTURE.project, 'fuzz-other-project'), fc.constantFrom('p'.repeat(255), 'p'.repeat(256))),
    user_id: texts(fc.constantFrom(FIXTURE.user, 'fuzz-other-user'), fc.constant('u'.repeat(256))),
    consumer_type: constants(['INSTANCE', 'MIGRATION', 'all', 'unknown'], ['all\n', 'allx', 'ALL', 'unknown\n', 'INSTANCE\n']),
    since: sinceText,
    until: untilText,
  };
  // A parameter may be named __proto__: own names only.
  return Object.hasOwn(specific, base) ? specific[base]! : { clean: hostileText, any: hostileText };
}
