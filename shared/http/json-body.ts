/**
 * A JSON request body read as upstream reads it (Python's json module,
 * shared/api/python-json.ts: its values and its error messages), with
 * the bounds a function needs whatever a client sends:
 * - at most MAX_BODY_BYTES (413), before anything is parsed;
 * - nested at most MAX_DEPTH deep (400), so that neither the parser nor the
 *   validator's error messages can exhaust the stack (upstream answers 500);
 * - strings of well-formed Unicode: a lone surrogate cannot be stored (400;
 *   upstream's database driver fails with a 500);
 * - integers past a double's exact range kept exact (BigInt) while the
 *   schema judges them, as Python keeps them: 400 digits are "greater than
 *   the maximum" for a total and merely a wrong generation (409) elsewhere.
 */
import { badRequest, HttpError } from '../api/errors.js';
import { parsePythonJson, PythonJsonError } from '../api/python-json.js';

/**
 * The largest body accepted. The largest legitimate ones (a reshape of a
 * dense host, a provider's trait list, POST /allocations) stay far below: a
 * 200-instance reshape is about 70 KB.
 */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest nesting accepted; Placement's own documents nest at most 7 deep. */
export const MAX_DEPTH = 64;

const malformed = (reason: string) => badRequest(`Malformed JSON: ${reason}`);

/** The nesting depth of the text's arrays and objects, outside strings, refused past MAX_DEPTH. */
function checkDepth(text: string): void {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      // A string: skip to its closing quote, over escapes.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > MAX_DEPTH) throw malformed(`nested more than ${MAX_DEPTH} levels deep`);
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    }
  }
}

const LONE_SURROGATE = /\p{Cs}/u;

/** Throws on the first string (value or key) that is not well-formed Unicode. */
function checkStrings(value: unknown): void {
  if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value)) throw malformed('a string holds a lone surrogate, which is not a character');
  } else if (Array.isArray(value)) {
    value.forEach(checkStrings);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      checkStrings(key);
      checkStrings(inner);
    }
  }
}

/** The body with its BigInts as numbers (infinite past a double's range). */
function withNumbers(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(withNumbers);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withNumbers(inner)]));
  return value;
}

/**
 * The body parsed, then judged by `validate` (which sees unsafe integers as
 * BigInts, exact), then handed over with plain numbers.
 */
export function readJsonBody(raw: string, validate: (body: unknown) => void): unknown {
  const bytes = Buffer.byteLength(raw);
  if (bytes > MAX_BODY_BYTES) {
    throw new HttpError(413, `The request body has ${bytes} bytes; at most ${MAX_BODY_BYTES} are accepted.`);
  }
  checkDepth(raw);
  let body: unknown;
  try {
    body = parsePythonJson(raw);
  } catch (error) {
    if (error instanceof PythonJsonError) throw malformed(error.message);
    throw error;
  }
  checkStrings(body);
  validate(body);
  return withNumbers(body);
}
