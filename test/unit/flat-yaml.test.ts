import { describe, expect, it } from 'vitest';
import { FlatYamlError, parseFlatYaml } from '../../shared/domain/flat-yaml.js';

describe('flat YAML policy files', () => {
  it('reads quoted and plain keys and values, comments and document markers', () => {
    const text = [
      '---',
      '# a comment',
      '"placement:resource_providers:list": "role:reader or (role:admin and system_scope:all)"',
      "'single': 'it''s quoted'",
      'plain_key: role:admin   # trailing comment',
      'hash_inside: "role:a#b"',
      '"escapes": "tab\\tquote\\" unicode \\u00e9"',
      '',
      '"empty": ""',
      '...',
    ].join('\n');
    expect(parseFlatYaml(text)).toEqual({
      'placement:resource_providers:list': 'role:reader or (role:admin and system_scope:all)',
      single: "it's quoted",
      plain_key: 'role:admin',
      hash_inside: 'role:a#b',
      escapes: 'tab\tquote" unicode é',
      empty: '',
    });
  });

  it('accepts CRLF line ends and an empty file', () => {
    expect(parseFlatYaml('"a": "@"\r\n"b": "!"\r\n')).toEqual({ a: '@', b: '!' });
    expect(parseFlatYaml('# nothing but comments\n')).toEqual({});
  });

  it('reads a JSON policy file', () => {
    expect(parseFlatYaml('{"admin_api": "role:admin", "x": "@"}')).toEqual({ admin_api: 'role:admin', x: '@' });
    expect(() => parseFlatYaml('{"x": true}')).toThrow(/must be a string/);
    expect(() => parseFlatYaml('{"x": ')).toThrow(/invalid JSON/);
  });

  it.each([
    ['nested:\n  key: value', /line 1: no value for "nested"/],
    ['"a": "b"\n  "c": "d"', /line 2: indented line/],
    ['- "a"', /line 1: expected "key: value"/],
    ['"a": @', /line 1: a value starting with "@" must be quoted/],
    ['"a": !', /line 1: a value starting with "!" must be quoted/],
    ['"a": |', /must be quoted/],
    ['"a": "unterminated', /line 1: unterminated quoted string/],
    ['"a": "x" trailing', /line 1: unexpected "trailing"/],
    ['"a": "x"\n"a": "y"', /line 2: duplicate key "a"/],
    ['"a":', /line 1: no value for "a"/],
    ['"a" "b"', /line 1: expected ":" after the key/],
    ['just words', /line 1: expected "key: value"/],
    ['"a":"b"', /expected a space after ":"/],
    ['a: b: c', /may not contain ": "/],
    ['"a": "\\q"', /unknown escape/],
    ['"a": "x"\n---\n"b": "y"', /line 2: only one document/],
  ])('refuses %j', (text, message) => {
    expect(() => parseFlatYaml(text)).toThrow(FlatYamlError);
    expect(() => parseFlatYaml(text)).toThrow(message);
  });
});
