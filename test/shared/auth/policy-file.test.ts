import { describe, expect, it } from 'vitest';
import { parsePolicyJson, PolicyFileError } from '../../../shared/auth/policy-file.js';

describe('policy files in Lambda (JSON the stack wrote)', () => {
  it('reads a flat object of check strings', () => {
    expect(parsePolicyJson('{"admin_api": "role:admin", "placement:traits:list": "@"}')).toEqual({ admin_api: 'role:admin', 'placement:traits:list': '@' });
  });

  it.each([
    ['"a": "b"', /not JSON .*policyFile context/],
    ['["a"]', /must be an object/],
    ['null', /must be an object/],
    ['{"a": 12}', /the value of "a" must be a check string/],
    ['{"a": {"b": "c"}}', /the value of "a" must be a check string/],
  ])('refuses %j', (text, message) => {
    expect(() => parsePolicyJson(text)).toThrow(PolicyFileError);
    expect(() => parsePolicyJson(text)).toThrow(message);
  });
});
