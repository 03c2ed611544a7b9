import { describe, expect, it } from 'vitest';
import { PolicyFileError } from '../../../shared/auth/policy-file.js';
import { parsePolicyFile } from '../../../shared/auth/policy-yaml.js';

describe('policy files', () => {
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
    expect(parsePolicyFile(text)).toEqual({
      'placement:resource_providers:list': 'role:reader or (role:admin and system_scope:all)',
      single: "it's quoted",
      plain_key: 'role:admin',
      hash_inside: 'role:a#b',
      escapes: 'tab\tquote" unicode é',
      empty: '',
    });
  });

  it('accepts CRLF line ends and an empty file', () => {
    expect(parsePolicyFile('"a": "@"\r\n"b": "!"\r\n')).toEqual({ a: '@', b: '!' });
    expect(parsePolicyFile('# nothing but comments\n')).toEqual({});
    expect(parsePolicyFile('')).toEqual({});
  });

  it('reads a JSON policy file', () => {
    expect(parsePolicyFile('{"admin_api": "role:admin", "x": "@"}')).toEqual({ admin_api: 'role:admin', x: '@' });
    expect(() => parsePolicyFile('{"x": ')).toThrow(PolicyFileError);
  });

  it('keeps plain values as text, as written', () => {
    expect(parsePolicyFile('"a": 12\n"b": true\n"c": null')).toEqual({ a: '12', b: 'true', c: 'null' });
  });

  it.each([
    ['nested:\n  key: value', /line 2: the value of "nested" must be a check string, not a nested mapping/],
    ['"a": "b"\n  "c": "d"', /line 2: /],
    ['- "a"', /line 1: the file must be a mapping of rule names to check strings/],
    ['just words', /line 1: the file must be a mapping/],
    ['"a": @', /line 1: .*reserved character @/],
    ['"a": !', /line 1: the value of "a" must be a check string, not a tag or anchor/],
    ['"a": !!str v', /not a tag or anchor/],
    ['"a": |', /line 1: the value of "a" must be a check string, not a block scalar/],
    ['"a": >\n  folded', /not a block scalar/],
    ['"a": &x "v"\n"b": *x', /line 1: .*not a tag or anchor/],
    ['"a": ["x"]', /not a nested mapping, list or alias/],
    ['"a": "unterminated', /line 1: .*closing "quote/],
    ['"a": "x" trailing', /line 1: /],
    ['"a": "x"\n"a": "y"', /line 2: Map keys must be unique/],
    ['"a":', /line 1: no value for "a"/],
    ['"a" "b"', /line 1: /],
    ['"a":"b"', /line 1: /],
    ['a: b: c', /line 1: /],
    ['"a": "\\q"', /line 1: .*\\q/],
    ['"a": "x"\n---\n"b": "y"', /multiple documents/],
  ])('refuses %j', (text, message) => {
    expect(() => parsePolicyFile(text)).toThrow(PolicyFileError);
    expect(() => parsePolicyFile(text)).toThrow(message);
  });
});
