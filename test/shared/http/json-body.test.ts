import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../shared/api/errors.js';
import { MAX_BODY_BYTES, MAX_DEPTH, readJsonBody } from '../../../shared/http/json-body.js';
import { validateBody } from '../../../shared/http/validation.js';
import { PUT_INVENTORY_1_0 } from '../../../shared/schemas/inventory.js';
import { PUT_ALLOCATIONS_1_28 } from '../../../shared/schemas/allocation.js';

const accept = () => undefined;

function failure(raw: string, validate: (body: unknown) => void = accept): HttpError {
  try {
    readJsonBody(raw, validate);
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error('expected an HttpError');
}

describe('readJsonBody', () => {
  it('parses ordinary bodies as JSON.parse does', () => {
    expect(readJsonBody('{"a": [1, 2.5, "x", null, true], "b": {"c": -3}}', accept)).toEqual({ a: [1, 2.5, 'x', null, true], b: { c: -3 } });
  });

  it('answers 413 past the size cap, before parsing', () => {
    const error = failure(`"${'x'.repeat(MAX_BODY_BYTES)}"`);
    expect(error.status).toBe(413);
    expect(error.message).toContain(`at most ${MAX_BODY_BYTES}`);
    // Bytes, not characters.
    expect(failure(`"${'\u00e9'.repeat(MAX_BODY_BYTES / 2)}"`).status).toBe(413);
  });

  it('refuses nesting past the depth cap, in linear time, and counts nothing inside strings', () => {
    const deep = failure(`${'['.repeat(200_000)}${']'.repeat(200_000)}`);
    expect(deep.status).toBe(400);
    expect(deep.message).toBe(`Malformed JSON: nested more than ${MAX_DEPTH} levels deep`);
    expect(failure(`${'{"a":'.repeat(MAX_DEPTH + 1)}1${'}'.repeat(MAX_DEPTH + 1)}`).status).toBe(400);
    expect(readJsonBody(`${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}`, accept)).toBeDefined();
    expect(readJsonBody(`["${'['.repeat(1000)}\\"${'{'.repeat(1000)}"]`, accept)).toHaveLength(1);
  });

  it('reports malformed JSON', () => {
    expect(failure('{"a": ').message).toMatch(/^Malformed JSON: /);
    expect(failure('\ufeff{}').status).toBe(400);
    expect(failure('').status).toBe(400);
  });

  it('refuses lone surrogates in values and keys', () => {
    expect(failure('{"name": "x\\ud800y"}').message).toBe('Malformed JSON: a string holds a lone surrogate, which is not a character');
    expect(failure('{"\\udfff": 1}').status).toBe(400);
    expect(readJsonBody('{"name": "\\ud83d\\ude00"}', accept)).toEqual({ name: '\u{1F600}' });
  });

  it('keeps integers too large for a double exact while the schema judges them, then hands over numbers', () => {
    const digits = '9'.repeat(400);
    let seen: unknown;
    const body = readJsonBody(`{"resource_provider_generation": ${digits}, "total": 12345678901234567890, "x": "${digits}"}`, (parsed) => {
      seen = parsed;
    });
    expect(seen).toEqual({ resource_provider_generation: BigInt(digits), total: 12345678901234567890n, x: digits });
    expect(body).toEqual({ resource_provider_generation: Infinity, total: Number(12345678901234567890n), x: digits });
    // Floats stay floats: 1e400 is Python's inf, not an integer.
    expect(readJsonBody('[1e400, -1e400, 2.5e3, 9007199254740991]', accept)).toEqual([Infinity, -Infinity, 2500, 9007199254740991]);
  });

  it('words schema failures of huge integers as upstream (Python) does', () => {
    const schemaError = (raw: string, schema = PUT_INVENTORY_1_0) => failure(raw, (body) => validateBody(schema, body)).message;
    expect(schemaError('{"resource_provider_generation": 1, "total": 12345678901234567890}')).toMatch(
      /^JSON does not validate: 12345678901234567890 is greater than the maximum of 2147483647 /,
    );
    expect(schemaError('{"resource_provider_generation": 1, "total": 8, "allocation_ratio": 1e400}')).toMatch(
      /^JSON does not validate: inf is greater than the maximum of 3.40282e\+38 /,
    );
    // A generation has no maximum: 400 digits are valid (then a conflict, as upstream).
    const claim = `{"allocations": {}, "project_id": "p", "user_id": "u", "consumer_generation": ${'9'.repeat(400)}}`;
    expect(readJsonBody(claim, (body) => validateBody(PUT_ALLOCATIONS_1_28, body))).toMatchObject({ consumer_generation: Infinity });
  });
});
