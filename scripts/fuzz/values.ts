/**
 * The fuzzer's raw material: JSON documents written exactly as generated
 * (numbers JSON.stringify cannot write, repeated and prototype keys), the
 * percent-encoding of paths and queries (undecodable bytes included), and the
 * hostile values every field and parameter is tried with.
 */
import fc from 'fast-check';

/**
 * A JSON value as written on the wire. Numbers are their text ("1e999",
 * "NaN", 400 digits); objects are entry lists, so that a key may repeat or be
 * "__proto__"; `live` is a provider's or a consumer's current generation,
 * filled in just before the request is sent (generations move as the run
 * writes).
 */
export type Json =
  | null
  | boolean
  | string
  | { number: string }
  | Json[]
  | { entries: [string, Json][] }
  /** Arrays and objects nested `deep` levels (written without recursion). */
  | { deep: number }
  | { live: 'provider' | 'consumer'; uuid: string; offset: number };

export interface LiveGenerations {
  provider(uuid: string): number | undefined;
  consumer(uuid: string): number | null | undefined;
}

const isNumber = (value: Json): value is { number: string } => typeof value === 'object' && value !== null && 'number' in value;
const isEntries = (value: Json): value is { entries: [string, Json][] } => typeof value === 'object' && value !== null && 'entries' in value;

/** JSON.stringify escapes a lone surrogate (\ud800), as a Python client sends it. */
export const jsonString = (text: string): string => JSON.stringify(text);

export function writeJson(value: Json, live: LiveGenerations): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return jsonString(value);
  if (Array.isArray(value)) return `[${value.map((item) => writeJson(item, live)).join(', ')}]`;
  if (isNumber(value)) return value.number;
  if ('deep' in value) return `${'[{"a": '.repeat(value.deep)}1${'}]'.repeat(value.deep)}`;
  if (isEntries(value)) return `{${value.entries.map(([key, inner]) => `${jsonString(key)}: ${writeJson(inner, live)}`).join(', ')}}`;
  const current = value.live === 'provider' ? live.provider(value.uuid) : live.consumer(value.uuid);
  // A consumer that does not exist yet is new (null); a provider that does not, any number will do.
  if (current === undefined || current === null) return value.live === 'consumer' && value.offset === 0 ? 'null' : String(value.offset);
  return String(current + value.offset);
}

export const num = (text: string | number): Json => ({ number: String(text) });
export const obj = (entries: [string, Json][]): Json => ({ entries });

/** Unreserved characters stay; every other UTF-16 unit is percent-encoded as UTF-8, a lone surrogate as its three bytes (not UTF-8). */
export function percentEncode(text: string): string {
  let out = '';
  for (const char of text) {
    if (/^[A-Za-z0-9_.~-]$/.test(char)) {
      out += char;
      continue;
    }
    const code = char.codePointAt(0)!;
    const bytes =
      code >= 0xd800 && code <= 0xdfff ? Buffer.from([0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]) : Buffer.from(char, 'utf8');
    for (const byte of bytes) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Escapes that decode to no character, or to one a naive decoder gets wrong, or do not decode at all. */
export const RAW_ESCAPES = [
  '%FF',
  '%C3%28',
  '%00',
  '%ED%A0%80',
  '%C0%AF',
  '%F0%28%8C%28',
  '%E2%82',
  '%2F',
  '%25',
  '%zz',
  '%',
  '%2',
  '%252F',
  '%2e%2e',
  '%0A',
  '%0D%0A',
];

export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype', '__defineGetter__', 'isPrototypeOf'];

/** Numbers as text: out of every range the API has, fractions, exponents, and what only Python's JSON reads. */
export const HOSTILE_NUMBERS = [
  '0',
  '-0',
  '-1',
  '1.5',
  '1.0',
  '1e3',
  '1E+2',
  '2147483647',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '18446744073709551616',
  '9'.repeat(400),
  `-${'9'.repeat(400)}`,
  '1e400',
  '-1e400',
  '1e-400',
  '3.4028236e38',
  'NaN',
  'Infinity',
  '-Infinity',
];

/** Number spellings in a query string or a path, where no JSON rules apply. */
export const HOSTILE_NUMBER_TEXTS = [...HOSTILE_NUMBERS, ' 1', '1 ', '+1', '0x10', '0b1', '1_000', '١', '', 'nan', 'inf', '1.', '.5', '0001'];

/** A string of `length` made of `unit`, cut to the length. */
const long = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

/** Lengths around the bounds that matter: 255 (names), 256, a few KB, past Node's 16 KB head and into tens of KB. */
export const LONG_LENGTHS = [36, 200, 201, 255, 256, 1024, 3000, 9000, 20_000, 40_000];

/** Strings no field means to take: empty, blank, control characters, lone surrogates, lookalikes, patterns, prototype names. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udfffy',
    '\ufeff',
    '\u{1F600}',
    'n\u0430me',
    'VCPU\n',
    'CUSTOM_X\n',
    '%',
    '_',
    '%%',
    '.*',
    '(a+)+$',
    '..',
    '/',
    'null',
    'true',
    '[]',
    '{}',
    ...PROTOTYPE_KEYS,
  ),
  fc.constantFrom(...HOSTILE_NUMBER_TEXTS),
  fc.tuple(fc.constantFrom('x', 'CUSTOM_X', '\u{1F600}', '%', 'a,'), fc.constantFrom(...LONG_LENGTHS)).map(([unit, length]) => long(unit, length)),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ maxLength: 40 }),
);

/** Text for a path segment or a query value: hostile text encoded, or raw escapes. */
export const hostileUrlText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: hostileText.map(percentEncode) },
  { weight: 2, arbitrary: fc.array(fc.constantFrom(...RAW_ESCAPES, 'a', 'Z', '_'), { minLength: 1, maxLength: 6 }).map((parts) => parts.join('')) },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ minLength: 1, maxLength: 16 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
  },
);

/** Values of the wrong type, size or depth for any field. */
export const hostileJson: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(null, true, false, '', [], obj([])),
  fc.constantFrom(...HOSTILE_NUMBERS).map(num),
  hostileText,
  // Around the 64 levels a body may nest (two a step), and far past them.
  fc.constantFrom(1, 31, 32, 33, 100, 3000).map((deep): Json => ({ deep })),
  fc.constantFrom(...PROTOTYPE_KEYS).map((key) => obj([[key, obj([['polluted', true]])]])),
  fc.array(fc.constantFrom<Json>(num(1), 'VCPU', null), { maxLength: 3 }).map((items) => [...items, ...items]),
);

/** A deterministic uuid-shaped string from a number (fixture ids must be the same in every run of a seed). */
export function fixedUuid(n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `f0220000-0000-4000-8000-${hex}`;
}
