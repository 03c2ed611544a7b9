import { describe, expect, it } from 'vitest';
import { dumpPythonJson, parsePythonJson, PythonFloat } from '../../../shared/api/python-json.js';

// [text, the message of Python 3.11's json.loads (Debian bookworm, upstream's interpreter)]
const PYTHON: [string, string | null][] = [
  ['{', 'Expecting property name enclosed in double quotes: line 1 column 2 (char 1)'],
  ['[1,2', "Expecting ',' delimiter: line 1 column 5 (char 4)"],
  ['{"name": }', 'Expecting value: line 1 column 10 (char 9)'],
  ['\u0000', 'Expecting value: line 1 column 1 (char 0)'],
  ['', 'Expecting value: line 1 column 1 (char 0)'],
  ['   ', 'Expecting value: line 1 column 4 (char 3)'],
  ['[1,]', 'Expecting value: line 1 column 4 (char 3)'],
  ['{"a":1,}', 'Expecting property name enclosed in double quotes: line 1 column 8 (char 7)'],
  ['{"a" 1}', "Expecting ':' delimiter: line 1 column 6 (char 5)"],
  ['{"a":1 "b":2}', "Expecting ',' delimiter: line 1 column 8 (char 7)"],
  ['"abc', 'Unterminated string starting at: line 1 column 1 (char 0)'],
  ['"a\\x"', 'Invalid \\escape: line 1 column 3 (char 2)'],
  ['"\\u12"', 'Invalid \\uXXXX escape: line 1 column 3 (char 2)'],
  ['"\\u12zz"', 'Invalid \\uXXXX escape: line 1 column 3 (char 2)'],
  ['[1] x', 'Extra data: line 1 column 5 (char 4)'],
  ['01', 'Extra data: line 1 column 2 (char 1)'],
  ['-', 'Expecting value: line 1 column 1 (char 0)'],
  ['1.', 'Extra data: line 1 column 2 (char 1)'],
  ['1e', 'Extra data: line 1 column 2 (char 1)'],
  ['[\n1,\n2\n', "Expecting ',' delimiter: line 4 column 1 (char 7)"],
  ['{"k":"\u00e9\u00e9",\n "x": tru}', 'Expecting value: line 2 column 7 (char 17)'],
  ['\ufeff{}', 'Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)'],
  ['nul', 'Expecting value: line 1 column 1 (char 0)'],
  ['[1,2]]', 'Extra data: line 1 column 6 (char 5)'],
  ['{"a":"b\nc"}', 'Invalid control character at: line 1 column 8 (char 7)'],
  ['"\\ud800\\u12x4"', 'Invalid \\uXXXX escape: line 1 column 9 (char 8)'],
  ['["\ud83d\ude00", x]', 'Expecting value: line 1 column 7 (char 6)'],
  ['{"a":[{"b":}]}', 'Expecting value: line 1 column 12 (char 11)'],
];

describe('parsePythonJson', () => {
  it("fails on malformed text with Python's message and position", () => {
    for (const [text, message] of PYTHON) {
      const thrown = (() => {
        try {
          parsePythonJson(text);
          return null;
        } catch (error) {
          return (error as Error).message;
        }
      })();
      expect(thrown, JSON.stringify(text)).toBe(message);
    }
  });

  it('reads what JSON.parse reads, keys such as __proto__ as own properties, and the constants Python accepts', () => {
    const text = '{"a": [1, -2.5e3, "x\\u00e9\\ud83d\\ude00", true, false, null], "__proto__": {"b": 1}}';
    expect(parsePythonJson(text)).toEqual(JSON.parse(text));
    expect(Object.getPrototypeOf(parsePythonJson('{"__proto__": {"polluted": 1}}'))).toBe(Object.prototype);
    expect(parsePythonJson('[NaN, Infinity, -Infinity]')).toEqual([NaN, Infinity, -Infinity]);
  });
});

describe('dumpPythonJson', () => {
  it("writes Python's separators and escapes non-ASCII text, keeping key order", () => {
    expect(dumpPythonJson({ errors: [{ status: 400, detail: 'naïve ☃', ok: true, none: null }], b: [1, 2.5] })).toBe(
      '{"errors": [{"status": 400, "detail": "na\\u00efve \\u2603", "ok": true, "none": null}], "b": [1, 2.5]}',
    );
  });

  it('reads back as the same value', () => {
    const value = { title: 'Bad Request', detail: 'line\n"quoted"\tü', list: [[], {}] };
    expect(parsePythonJson(dumpPythonJson(value))).toEqual(value);
  });

  it("writes a float as Python's repr does (json.dumps of upstream's Float columns), and JSON.stringify the plain number", () => {
    // [value, Python 3.11's repr(float(value))]
    const cases: [number, string][] = [
      [16, '16.0'],
      [1, '1.0'],
      [0, '0.0'],
      [1.5, '1.5'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [0.000015, '1.5e-05'],
      [1234567890123456, '1234567890123456.0'],
      [1e16, '1e+16'],
      [12345678901234568, '1.2345678901234568e+16'],
      [3.4e38, '3.4e+38'],
    ];
    for (const [value, python] of cases) expect(dumpPythonJson({ allocation_ratio: new PythonFloat(value) })).toBe(`{"allocation_ratio": ${python}}`);
    expect(JSON.stringify({ allocation_ratio: new PythonFloat(16) })).toBe('{"allocation_ratio":16}');
  });
});
