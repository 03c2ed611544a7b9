/**
 * Placement microversions: parsing the `OpenStack-API-Version` header and
 * comparing versions. Pure; no I/O.
 */
import { HttpError } from './errors.js';
import { pyRepr } from './python-repr.js';

export const MIN_VERSION = '1.0';
export const MAX_VERSION = '1.39';
const SERVICE_TYPE = 'placement';

export class Microversion {
  constructor(
    readonly major: number,
    readonly minor: number,
  ) {}

  /** A version the code names ("1.14"). */
  static parse(text: string): Microversion {
    const [major, minor] = parseRequested(text);
    return new Microversion(Number(major), Number(minor));
  }

  /** True when this version is at least `other` ("1.14"). */
  isAtLeast(other: string): boolean {
    const { major, minor } = Microversion.parse(other);
    return this.major !== major ? this.major > major : this.minor >= minor;
  }

  isBefore(other: string): boolean {
    return !this.isAtLeast(other);
  }

  toString(): string {
    return `${this.major}.${this.minor}`;
  }
}

/** Python's int() of a str (upstream's parser): spaces around, a sign, digits with single underscores between; at most 4300 digits. */
function pythonInt(text: string): bigint | undefined {
  // Python's str.strip() also removes the separators \x1c-\x1f.
  // eslint-disable-next-line no-control-regex
  const match = /^[\s\x1c-\x1f\x85]*([+-]?)(\d+(?:_\d+)*)[\s\x1c-\x1f\x85]*$/.exec(text);
  const digits = match?.[2]?.replaceAll('_', '');
  if (digits === undefined || digits.length > 4300) return undefined;
  return BigInt(`${match![1]}${digits}`);
}

const MIN = Microversion.parse(MIN_VERSION);
const MAX = Microversion.parse(MAX_VERSION);

/**
 * Reads a version string as upstream's microversion-parse does: split at the
 * first dot, each part read by Python's int() (so `01.05` is 1.5 and `-1.0`
 * is a version, just not an acceptable one); the error texts are Python's.
 */
function parseRequested(text: string): [bigint, bigint] {
  const parts = [text.slice(0, text.includes('.') ? text.indexOf('.') : undefined), ...(text.includes('.') ? [text.slice(text.indexOf('.') + 1)] : [])];
  const numbers = parts.map((part) => {
    const number = pythonInt(part);
    if (number === undefined) {
      throw new HttpError(400, `Invalid microversion: invalid version string: ${text}; invalid literal for int() with base 10: ${pyRepr(part)}`, {
        versioned: false,
      });
    }
    return number;
  });
  if (numbers.length === 1) {
    throw new HttpError(400, `Invalid microversion: invalid version string: ${text}; Version.__new__() missing 1 required positional argument: 'minor'`, {
      versioned: false,
    });
  }
  return [numbers[0], numbers[1]];
}

/**
 * The version a request asks for. The header may name several services
 * ("compute 2.1, placement 1.2"); the last placement entry counts, as
 * upstream reads them; without one the minimum applies.
 */
export function requestedMicroversion(header: string | undefined): Microversion {
  const text = (header ?? '')
    .split(',')
    .reverse()
    .map((part) => /^(\S+)\s+(.*)$/s.exec(part.trim()))
    .find((entry) => entry?.[1].toLowerCase() === SERVICE_TYPE)?.[2]
    .trim();
  if (text === undefined) return MIN;
  if (text === 'latest') return MAX;
  const [major, minor] = parseRequested(text);
  if (major !== BigInt(MIN.major) || minor < BigInt(MIN.minor) || minor > BigInt(MAX.minor)) {
    throw new HttpError(406, `Invalid microversion: Unacceptable version header: ${text}`, {
      versioned: false,
      explanation: 'The resource could not be generated that was acceptable to your browser (content of type application/json.',
      extra: { max_version: MAX_VERSION, min_version: MIN_VERSION },
    });
  }
  return new Microversion(Number(major), Number(minor));
}
