/**
 * Python's repr() and pprint.pformat(width=72) of JSON values: upstream's
 * error messages quote the offending values as Python prints them, so the
 * schema validator and the domain's query parsing lay them out the same way.
 */

type JsonObject = Record<string, unknown>;

/** Python's len() of a str: code points, not UTF-16 units. */
export const codePoints = (s: string) => s.length - (s.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// Python's str.splitlines() also breaks at the separators \x1c-\x1e.
// eslint-disable-next-line no-control-regex
const LINE = /[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029])?/gu;

function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  // Most strings: only the backslash and the quote need escaping.
  if (PRINTABLE_ASCII.test(s)) return quote + s.replace(quote === "'" ? /[\\']/g : /\\/g, '\\$&') + quote;
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === quote || ESCAPES[ch]) out += ESCAPES[ch] ?? `\\${ch}`;
    else if (ch === ' ' || !NON_PRINTABLE.test(ch)) out += ch;
    else if (code < 0x100) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += code < 0x10000 ? `\\u${code.toString(16).padStart(4, '0')}` : `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return quote + out + quote;
}

/** A Python float's repr(): integral values with ".0" (16.0), exponents from 1e-05 and 1e+16 on, as Python writes them. */
export function reprFloat(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'nan' : n > 0 ? 'inf' : '-inf';
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 16) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  if (!Number.isInteger(n)) return String(n);
  return Object.is(n, -0) ? '-0.0' : `${n}.0`;
}

/** Integral values print as Python ints (JSON.parse cannot tell 1 from 1.0), others as Python floats. */
function reprNumber(n: number): string {
  // Clients write integers as digits (JSON.stringify does below 1e21), which Python reads as ints.
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  return reprFloat(n);
}

const entriesOf = (o: JsonObject, sorted: boolean) => (sorted ? Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : Object.entries(o));

/** Python's repr() of a JSON value; `sorted` orders dict keys as pprint does. */
export function pyRepr(value: unknown, sorted = false): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return reprNumber(value);
  // An integer too large for a double, kept exact as Python keeps it (see http/json-body.ts).
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'string') return reprString(value);
  if (Array.isArray(value)) return `[${value.map((v) => pyRepr(v, sorted)).join(', ')}]`;
  return `{${entriesOf(value as JsonObject, sorted)
    .map(([k, v]) => `${reprString(k)}: ${pyRepr(v, sorted)}`)
    .join(', ')}}`;
}

/** pprint's long string: a repr per line, long lines cut after whitespace, parenthesised at top level. */
function pformatString(s: string, indent: number, allowance: number, top: boolean): string {
  if (top) [indent, allowance] = [indent + 1, allowance + 1];
  const lines = s.match(LINE)!.filter(Boolean);
  const chunks: string[] = [];
  lines.forEach((line, i) => {
    const lastLine = i === lines.length - 1;
    if (codePoints(reprString(line)) <= 72 - indent - (lastLine ? allowance : 0)) return void chunks.push(reprString(line));
    const parts = line.match(/\S*\s*/gu)!.filter(Boolean);
    let current = '';
    for (const [j, part] of parts.entries()) {
      const width = 72 - indent - (lastLine && j === parts.length - 1 ? allowance : 0);
      if (codePoints(reprString(current + part)) <= width) {
        current += part;
        continue;
      }
      if (current) chunks.push(reprString(current));
      current = part;
    }
    if (current) chunks.push(reprString(current));
  });
  if (chunks.length <= 1) return reprString(s);
  const body = chunks.join(`\n${' '.repeat(indent)}`);
  return top ? `(${body})` : body;
}

/**
 * Whether pyRepr(value, true) has at most `width` code points. Looks at
 * little more than `width` of the value (pprint prints each level whole to
 * find out, which costs the size of the value times its depth).
 */
function reprFits(value: unknown, width: number): boolean {
  let left = width;
  const take = (length: number) => (left -= length) >= 0;
  const fits = (v: unknown): boolean => {
    // A string's repr has at least half as many code points as it has UTF-16 units, plus its quotes.
    if (typeof v === 'string') return v.length / 2 + 2 <= left && take(codePoints(reprString(v)));
    if (Array.isArray(v)) return take(2) && v.every((item, i) => (i === 0 || take(2)) && fits(item));
    if (v !== null && typeof v === 'object') {
      return take(2) && Object.entries(v).every(([key, item], i) => (i === 0 || take(2)) && fits(key) && take(2) && fits(item));
    }
    return take(pyRepr(v).length);
  };
  return fits(value);
}

export function pformat(value: unknown, indent = 0, allowance = 0, top = true): string {
  if (reprFits(value, 72 - indent - allowance)) return pyRepr(value, true);
  if (typeof value === 'string') return pformatString(value, indent, allowance, top);
  if (typeof value !== 'object' || value === null) return pyRepr(value, true);
  const sep = `,\n${' '.repeat(indent + 1)}`;
  const last = (i: number, n: number) => (i === n - 1 ? allowance + 1 : 1);
  if (Array.isArray(value)) return `[${value.map((v, i) => pformat(v, indent + 1, last(i, value.length), false)).join(sep)}]`;
  const entries = entriesOf(value as JsonObject, true);
  return `{${entries
    .map(([k, v], i) => {
      const key = reprString(k);
      return `${key}: ${pformat(v, indent + 1 + codePoints(key) + 2, last(i, entries.length), false)}`;
    })
    .join(sep)}}`;
}
