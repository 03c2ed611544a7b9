/**
 * JSON as upstream's Python reads and writes it. Reading: request bodies (Python 3.11's json.loads, its
 * C scanner): the same values, and for malformed text the same error, e.g.
 * "Expecting ',' delimiter: line 1 column 5 (char 4)", which upstream puts
 * in its 400. Hand-written because the messages and positions are Python's
 * own; JSON.parse words them differently. Positions count code points, as
 * Python's str does. NaN, Infinity and -Infinity are accepted, as Python does.
 * Recursive: callers bound the nesting first (shared/http/json-body.ts).
 */
import { reprFloat } from './python-repr.js';

export class PythonJsonError extends Error {}

/**
 * A number upstream holds as a Python float (a Float column: allocation_ratio), which its answers write as 16.0 where
 * JSON.stringify writes 16: a Python client reads the one as a float and the other as an int (osc prints them so).
 * dumpPythonJson writes it as Python does; JSON.stringify, as the plain number.
 */
export class PythonFloat {
  constructor(readonly value: number) {}

  toJSON(): number {
    return this.value;
  }
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const HEX4 = /^[0-9a-fA-F]{4}$/;
const DIGIT = /^[0-9]$/;

/** Thrown where Python's scanner raises StopIteration (no JSON term at `index`): "Expecting value". */
class NoTerm {
  constructor(readonly index: number) {}
}

class Scanner {
  constructor(private readonly chars: string[]) {}

  fail(message: string, index: number): never {
    let line = 1;
    let lastNewline = -1;
    for (let i = 0; i < index && i < this.chars.length; i++) {
      if (this.chars[i] === '\n') {
        line++;
        lastNewline = i;
      }
    }
    throw new PythonJsonError(`${message}: line ${line} column ${index - lastNewline} (char ${index})`);
  }

  skipWhitespace(index: number): number {
    while (index < this.chars.length && WHITESPACE.has(this.chars[index])) index++;
    return index;
  }

  /** One JSON term at `index`: [value, index after it]. */
  term(index: number): [unknown, number] {
    const { chars } = this;
    if (index >= chars.length) throw new NoTerm(index);
    const c = chars[index];
    const word = (text: string) => chars.slice(index, index + text.length).join('') === text;
    if (c === '"') return this.string(index + 1);
    if (c === '{') return this.object(index + 1);
    if (c === '[') return this.array(index + 1);
    if (c === 'n' && word('null')) return [null, index + 4];
    if (c === 't' && word('true')) return [true, index + 4];
    if (c === 'f' && word('false')) return [false, index + 5];
    if (c === 'N' && word('NaN')) return [NaN, index + 3];
    if (c === 'I' && word('Infinity')) return [Infinity, index + 8];
    if (c === '-' && word('-Infinity')) return [-Infinity, index + 9];
    return this.number(index);
  }

  /** A number; an integer literal past a double's exact range stays exact as a BigInt, as Python keeps it. */
  number(start: number): [number | bigint, number] {
    const { chars } = this;
    const last = chars.length - 1;
    let index = start;
    if (chars[index] === '-') {
      index++;
      if (index > last) throw new NoTerm(start);
    }
    if (chars[index] >= '1' && chars[index] <= '9') {
      index++;
      while (index <= last && DIGIT.test(chars[index])) index++;
    } else if (chars[index] === '0') index++;
    else throw new NoTerm(start);
    if (index < last && chars[index] === '.' && DIGIT.test(chars[index + 1])) {
      index += 2;
      while (index <= last && DIGIT.test(chars[index])) index++;
    }
    if (index < last && (chars[index] === 'e' || chars[index] === 'E')) {
      const exponentStart = index;
      index++;
      if (index < last && (chars[index] === '-' || chars[index] === '+')) index++;
      while (index <= last && DIGIT.test(chars[index])) index++;
      if (!DIGIT.test(chars[index - 1])) index = exponentStart;
    }
    const literal = chars.slice(start, index).join('');
    const value = Number(literal);
    return [/^-?\d+$/.test(literal) && !Number.isSafeInteger(value) ? BigInt(literal) : value, index];
  }

  string(index: number): [string, number] {
    const { chars } = this;
    const begin = index - 1;
    let value = '';
    for (;;) {
      let next = index;
      while (next < chars.length && chars[next] !== '"' && chars[next] !== '\\') {
        if (chars[next].codePointAt(0)! <= 0x1f) this.fail('Invalid control character at', next);
        next++;
      }
      if (next >= chars.length) this.fail('Unterminated string starting at', begin);
      value += chars.slice(index, next).join('');
      if (chars[next] === '"') return [value, next + 1];
      next++;
      if (next === chars.length) this.fail('Unterminated string starting at', begin);
      if (chars[next] !== 'u') {
        const escaped = ESCAPES[chars[next]];
        if (escaped === undefined) this.fail('Invalid \\escape', next - 1);
        value += escaped;
        index = next + 1;
        continue;
      }
      const end = next + 5;
      if (end >= chars.length) this.fail('Invalid \\uXXXX escape', next);
      const hex = chars.slice(next + 1, end).join('');
      if (!HEX4.test(hex)) this.fail('Invalid \\uXXXX escape', next);
      let code = parseInt(hex, 16);
      index = end;
      // A high surrogate followed by an escaped low one is one character.
      if (code >= 0xd800 && code <= 0xdbff && end + 6 < chars.length && chars[end] === '\\' && chars[end + 1] === 'u') {
        const low = chars.slice(end + 2, end + 6).join('');
        if (!HEX4.test(low)) this.fail('Invalid \\uXXXX escape', end + 1);
        const lowCode = parseInt(low, 16);
        if (lowCode >= 0xdc00 && lowCode <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (lowCode - 0xdc00);
          index = end + 6;
        }
      }
      value += String.fromCodePoint(code);
    }
  }

  object(start: number): [Record<string, unknown>, number] {
    const { chars } = this;
    const result: Record<string, unknown> = {};
    let index = this.skipWhitespace(start);
    if (chars[index] !== '}') {
      for (;;) {
        if (chars[index] !== '"') this.fail('Expecting property name enclosed in double quotes', index);
        const [key, afterKey] = this.string(index + 1);
        index = this.skipWhitespace(afterKey);
        if (chars[index] !== ':') this.fail("Expecting ':' delimiter", index);
        index = this.skipWhitespace(index + 1);
        const [value, afterValue] = this.term(index);
        // An own property whatever the key (`__proto__` included), as JSON.parse makes it.
        Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
        index = this.skipWhitespace(afterValue);
        if (chars[index] === '}') break;
        if (chars[index] !== ',') this.fail("Expecting ',' delimiter", index);
        index = this.skipWhitespace(index + 1);
      }
    }
    return [result, index + 1];
  }

  array(start: number): [unknown[], number] {
    const { chars } = this;
    const result: unknown[] = [];
    let index = this.skipWhitespace(start);
    if (chars[index] !== ']') {
      for (;;) {
        const [value, afterValue] = this.term(index);
        result.push(value);
        index = this.skipWhitespace(afterValue);
        if (chars[index] === ']') break;
        if (chars[index] !== ',') this.fail("Expecting ',' delimiter", index);
        index = this.skipWhitespace(index + 1);
      }
    }
    return [result, index + 1];
  }
}

/** Parses `text` as Python's json.loads would, throwing PythonJsonError with Python's message. */
export function parsePythonJson(text: string): unknown {
  const chars = Array.from(text);
  const scanner = new Scanner(chars);
  if (chars[0] === '\ufeff') scanner.fail('Unexpected UTF-8 BOM (decode using utf-8-sig)', 0);
  try {
    const [value, end] = scanner.term(scanner.skipWhitespace(0));
    const rest = scanner.skipWhitespace(end);
    if (rest !== chars.length) scanner.fail('Extra data', rest);
    return value;
  } catch (error) {
    if (error instanceof NoTerm) scanner.fail('Expecting value', error.index);
    throw error;
  }
}

/** JSON as Python's json.dumps writes it (", " and ": " separators, non-ASCII escaped), byte for byte like upstream's error bodies. */
export function dumpPythonJson(value: unknown): string {
  if (value instanceof PythonFloat) return reprFloat(value.value);
  if (Array.isArray(value)) return `[${value.map(dumpPythonJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, inner]) => `${JSON.stringify(key)}: ${dumpPythonJson(inner)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
