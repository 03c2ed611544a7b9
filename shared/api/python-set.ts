/**
 * The order in which CPython 3.11 iterates a set of small non-negative ints
 * (`list(set(ids))`): upstream joins resource class ids collected in a set
 * into some error messages, so their order is the table order of CPython's
 * open-addressing set, which this reproduces (hash(n) = n).
 */
const MIN_SIZE = 8;
const LINEAR_PROBES = 9;
const PERTURB_SHIFT = 5;

/** Where `value` lands in `table` (null marks a free slot); the slot holding it already, if any. */
function slotFor(table: (number | null)[], value: number): number {
  const mask = table.length - 1;
  let perturb = value;
  let i = value & mask;
  for (;;) {
    const probes = i + LINEAR_PROBES <= mask ? LINEAR_PROBES : 0;
    for (let j = 0; j <= probes; j++) {
      if (table[i + j] === null || table[i + j] === value) return i + j;
    }
    perturb = Math.floor(perturb / 2 ** PERTURB_SHIFT);
    i = (i * 5 + 1 + perturb) & mask;
  }
}

export function pythonSetOrder(values: readonly number[]): number[] {
  let table: (number | null)[] = new Array(MIN_SIZE).fill(null);
  let used = 0;
  for (const value of values) {
    const slot = slotFor(table, value);
    if (table[slot] === value) continue;
    table[slot] = value;
    used++;
    if (used * 5 < (table.length - 1) * 3) continue;
    // Grown to the smallest power of two above four times the entries, re-inserted in table order.
    let size = MIN_SIZE;
    while (size <= used * 4) size *= 2;
    const old = table.filter((entry): entry is number => entry !== null);
    table = new Array(size).fill(null);
    for (const entry of old) table[slotFor(table, entry)] = entry;
  }
  return table.filter((entry): entry is number => entry !== null);
}
