/** Seeded randomness for generated test data: the same seed gives the same clouds and regions, uuids included. */

export interface SeededRandom {
  /** A number in [0, 1). */
  next(): number;
  /** A whole number from `low` to `high`, both included. */
  int(low: number, high: number): number;
  /** One of the items. */
  pick<T>(items: readonly T[]): T;
  /** A version-4-shaped uuid. */
  uuid(): string;
}

/** mulberry32: small, seedable, good enough to spread test data. */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (low: number, high: number) => low + Math.floor(next() * (high - low + 1));
  return {
    next,
    int,
    pick: (items) => items[int(0, items.length - 1)]!,
    uuid: () => {
      const hex = Array.from({ length: 32 }, () => int(0, 15).toString(16)).join('');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[int(0, 3)]}${hex.slice(17, 20)}-${hex.slice(20)}`;
    },
  };
}
