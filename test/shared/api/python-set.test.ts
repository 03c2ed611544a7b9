import { describe, expect, it } from 'vitest';
import { pythonSetOrder } from '../../../shared/api/python-set.js';

// list(set(ids)) as CPython 3.11 (Debian bookworm, upstream's interpreter) printed them.
const CPYTHON: [number[], number[]][] = [
  [
    [9, 4, 23],
    [9, 4, 23],
  ],
  [
    [13, 27, 10000, 3, 14],
    [3, 13, 14, 10000, 27],
  ],
  [
    [37, 14, 18, 10000, 35],
    [35, 37, 14, 10000, 18],
  ],
  [[37], [37]],
  [
    [6, 36, 10005],
    [36, 10005, 6],
  ],
  [
    [10003, 23, 11, 10004, 10003, 28, 10004],
    [11, 10003, 10004, 23, 28],
  ],
  [
    [10001, 26],
    [10001, 26],
  ],
  [
    [10004, 10005, 10003, 10000, 30, 10005, 10005],
    [10000, 10003, 10004, 10005, 30],
  ],
  [
    [10005, 10003, 10],
    [10, 10003, 10005],
  ],
  [
    [10001, 8, 10003, 10001],
    [8, 10001, 10003],
  ],
  [
    [35, 10004, 10002, 14],
    [10002, 35, 10004, 14],
  ],
  [
    [9, 0],
    [0, 9],
  ],
];

describe('pythonSetOrder', () => {
  it('iterates small ints in the table order of a CPython set', () => {
    expect(pythonSetOrder([2, 9])).toEqual([9, 2]);
    expect(pythonSetOrder([0, 8, 16])).toEqual([0, 8, 16]);
    for (const [inserted, iterated] of CPYTHON) expect(pythonSetOrder(inserted), JSON.stringify(inserted)).toEqual(iterated);
  });
});
