/**
 * The raw query string kept as a multi-map: API Gateway's
 * `queryStringParameters` joins repeated keys with commas, which would make
 * `required=A&required=B` (all of) look like `required=A,B` (1.39 meaning
 * differs), so handlers read the raw string through this class.
 */
import { badRequest, ErrorCode } from './errors.js';

export class QueryString {
  private constructor(private readonly entries: Map<string, string[]>) {}

  static parse(raw: string): QueryString {
    const entries = new Map<string, string[]>();
    for (const [key, value] of new URLSearchParams(raw)) {
      const values = entries.get(key);
      if (values === undefined) entries.set(key, [value]);
      else values.push(value);
    }
    return new QueryString(entries);
  }

  keys(): string[] {
    return [...this.entries.keys()];
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Every value given for the key, in order. */
  all(key: string): string[] {
    return this.entries.get(key) ?? [];
  }

  /** The last value given for the key (webob's behaviour for a plain lookup). */
  get(key: string): string | undefined {
    return this.entries.get(key)?.at(-1);
  }

  /** The single value of a key that must not repeat. */
  single(key: string): string | undefined {
    const values = this.all(key);
    if (values.length > 1) {
      throw badRequest(`Query parameter ${JSON.stringify(key)} may be specified only once.`, ErrorCode.ILLEGAL_DUPLICATE_QUERYPARAM);
    }
    return values[0];
  }

  /** One value per key (the last), the shape query-string schemas validate. */
  toRecord(): Record<string, string> {
    return Object.fromEntries([...this.entries].map(([key, values]) => [key, values.at(-1)!]));
  }
}
