/**
 * The YAML that policy files use, and nothing more: one flat mapping of
 * string keys to string values (`"rule": "check"`), comments, blank lines,
 * single- or double-quoted or plain scalars, an optional `---` / `...`. JSON
 * objects of strings are accepted too (JSON is YAML). Anything else (nesting,
 * lists, block scalars, anchors, tags) is an error rather than a guess: a
 * policy file read wrongly could grant access.
 */

export class FlatYamlError extends Error {}

/** A plain scalar may not start with these YAML indicators (quote such values). */
const INDICATORS = new Set(['@', '`', '!', '&', '*', '|', '>', '%', '{', '[', ']', '}', ',', '-', '?']);

const ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  '\t': '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
};

/** Reads a quoted scalar starting at text[start] (the quote); returns its value and the index after the closing quote. */
function quoted(text: string, start: number, fail: (message: string) => never): { value: string; end: number } {
  const quote = text[start];
  let value = '';
  let i = start + 1;
  while (i < text.length) {
    const char = text[i]!;
    if (char === quote) {
      if (quote === "'" && text[i + 1] === "'") {
        value += "'";
        i += 2;
        continue;
      }
      return { value, end: i + 1 };
    }
    if (quote === '"' && char === '\\') {
      const escape = text[i + 1] ?? '';
      const hexLength = { x: 2, u: 4, U: 8 }[escape];
      if (hexLength !== undefined) {
        const hex = text.slice(i + 2, i + 2 + hexLength);
        if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(hex)) fail(`bad \\${escape} escape`);
        value += String.fromCodePoint(parseInt(hex, 16));
        i += 2 + hexLength;
        continue;
      }
      if (!(escape in ESCAPES)) fail(`unknown escape \\${escape}`);
      value += ESCAPES[escape];
      i += 2;
      continue;
    }
    value += char;
    i++;
  }
  return fail('unterminated quoted string (multi-line scalars are not supported)');
}

/** What may follow a scalar on its line: spaces, then nothing or a comment. */
function expectLineEnd(rest: string, fail: (message: string) => never): void {
  const trimmed = rest.trimStart();
  if (trimmed !== '' && !(trimmed.startsWith('#') && rest !== trimmed)) fail(`unexpected ${JSON.stringify(trimmed)}`);
}

function plainScalar(text: string, fail: (message: string) => never): string {
  const comment = /\s#/.exec(text);
  const value = (comment ? text.slice(0, comment.index) : text).trim();
  if (value !== '' && INDICATORS.has(value[0]!) && !(value[0] === '-' && value.length > 1 && value[1] !== ' ')) {
    fail(`a value starting with ${JSON.stringify(value[0])} must be quoted`);
  }
  if (/:(\s|$)/.test(value)) fail('a plain value may not contain ": " (quote it)');
  return value;
}

function parseJson(text: string): Record<string, string> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new FlatYamlError(`invalid JSON: ${(error as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new FlatYamlError('the document must be an object of strings');
  for (const [key, value] of Object.entries(data)) {
    if (typeof value !== 'string') throw new FlatYamlError(`the value of ${JSON.stringify(key)} must be a string`);
  }
  return data as Record<string, string>;
}

/** Parses a flat YAML (or JSON) mapping of strings. Throws FlatYamlError naming the line. */
export function parseFlatYaml(text: string): Record<string, string> {
  if (text.trimStart().startsWith('{')) return parseJson(text);
  const result: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    const fail = (message: string): never => {
      throw new FlatYamlError(`line ${index + 1}: ${message}`);
    };
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    if (/^(---|\.\.\.)\s*(#.*)?$/.test(line)) {
      if (line.startsWith('---') && Object.keys(result).length > 0) fail('only one document is allowed');
      continue;
    }
    if (/^\s/.test(line)) fail('indented line: only a flat mapping of "rule": "check string" is supported');

    let key: string;
    let rest: string;
    if (line[0] === '"' || line[0] === "'") {
      const parsed = quoted(line, 0, fail);
      key = parsed.value;
      rest = line.slice(parsed.end).trimStart();
      if (!rest.startsWith(':')) fail('expected ":" after the key');
      rest = rest.slice(1);
    } else {
      const colon = /:(\s|$)/.exec(line);
      if (colon === null) fail('expected "key: value"');
      key = line.slice(0, colon!.index).trim();
      if (key === '' || INDICATORS.has(key[0]!)) fail(`invalid key ${JSON.stringify(key)}`);
      rest = line.slice(colon!.index + 1);
    }
    if (rest !== '' && !/^\s/.test(rest)) fail('expected a space after ":"');
    if (Object.hasOwn(result, key)) fail(`duplicate key ${JSON.stringify(key)}`);

    const valueText = rest.trimStart();
    if (valueText.startsWith('"') || valueText.startsWith("'")) {
      const parsed = quoted(valueText, 0, fail);
      expectLineEnd(valueText.slice(parsed.end), fail);
      result[key] = parsed.value;
    } else {
      const value = plainScalar(valueText, fail);
      // YAML reads an empty value as null, which oslo.policy takes as "always allowed": too easy to write by accident.
      if (value === '') fail(`no value for ${JSON.stringify(key)} (write "" to allow everyone, "!" to allow no one)`);
      result[key] = value;
    }
  }
  return result;
}
