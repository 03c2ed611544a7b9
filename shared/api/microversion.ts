/**
 * Placement microversions: parsing the `OpenStack-API-Version` header and
 * comparing versions. Pure; no I/O.
 */
import { HttpError } from './errors.js';

export const MIN_VERSION = '1.0';
export const MAX_VERSION = '1.39';
export const SERVICE_TYPE = 'placement';

export class Microversion {
  constructor(
    readonly major: number,
    readonly minor: number,
  ) {}

  static parse(text: string): Microversion {
    const match = /^(\d+)\.(\d+)$/.exec(text);
    if (!match) {
      throw new HttpError(400, `Invalid microversion: invalid version string: ${text}`, { versioned: false });
    }
    return new Microversion(Number(match[1]), Number(match[2]));
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

const MIN = Microversion.parse(MIN_VERSION);
const MAX = Microversion.parse(MAX_VERSION);

/**
 * The version a request asks for. The header may name several services
 * ("compute 2.1, placement 1.2"); without a placement entry the minimum applies.
 */
export function requestedMicroversion(header: string | undefined): Microversion {
  const entry = (header ?? '')
    .split(',')
    .map((part) => part.trim().split(/\s+/))
    .find(([service]) => service?.toLowerCase() === SERVICE_TYPE);
  const text = entry?.slice(1).join(' ');
  if (text === undefined || text === '') return MIN;
  if (text === 'latest') return MAX;
  const version = Microversion.parse(text);
  if (!version.isAtLeast(MIN_VERSION) || !MAX.isAtLeast(version.toString())) {
    throw new HttpError(406, `Invalid microversion: Unacceptable version header: ${text}`, {
      versioned: false,
      explanation: 'The resource could not be generated that was acceptable to your browser (content of type application/json.',
      extra: { max_version: MAX_VERSION, min_version: MIN_VERSION },
    });
  }
  return version;
}
