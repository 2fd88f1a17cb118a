import { StringTable } from '../src/string-table';
import { random } from './support/random';

/** Checks every key of `pool` reads the same from the table and from the Map, and the sizes agree. */
function expectSame(table: StringTable<number>, map: Map<string, number>, pool: readonly string[]): void {
  if (table.size !== map.size) expect(table.size).toBe(map.size);
  for (const key of pool) if (table.get(key) !== map.get(key)) expect([key, table.get(key)]).toEqual([key, map.get(key)]);
}

describe('StringTable', () => {
  it('gets, sets, replaces and deletes as a Map does', () => {
    const table = new StringTable<number>();
    expect(table.get('a')).toBeUndefined();
    table.set('a', 1);
    table.set('b', 2);
    table.set('a', 3);
    expect([table.get('a'), table.get('b'), table.size]).toEqual([3, 2, 2]);
    expect(table.delete('a')).toBe(true);
    expect(table.delete('a')).toBe(false);
    expect([table.get('a'), table.get('b'), table.size]).toEqual([undefined, 2, 1]);
    // Keys equal as strings are the same key, however they were built.
    table.set(['x', 'y'].join(' '), 7);
    expect(table.get(`x ${'y'}`)).toBe(7);
    expect(table.get('')).toBeUndefined();
    table.set('', 0);
    expect(table.get('')).toBe(0);
  });

  // Random operations on a small key pool, so that deletions land in the middle of probe runs:
  // 8 keys keep the table at its first 16 slots (runs that wrap around the end of the arrays),
  // 40 make it grow.
  // Each case runs with 20 hash seeds of its own, so that every placement is replayed as it was.
  it.each([
    [8, 1],
    [8, 2],
    [12, 3],
    [40, 4],
    [40, 5],
  ])('agrees with a Map over 20 x 20,000 random operations (%i keys, seed %i)', (keys, seed) => {
    for (let hashSeed = 0; hashSeed < 20; hashSeed++) agreesWithMap(keys, 1000 * seed + hashSeed);
  });

  function agreesWithMap(keys: number, seed: number): void {
    const next = random(seed);
    const pool = Array.from({ length: keys }, (_, i) => `- getblockhash [${i}]`);
    const table = new StringTable<number>(16, seed);
    const map = new Map<string, number>();
    for (let op = 0; op < 20_000; op++) {
      const key = pool[Math.floor(next() * pool.length)] as string;
      const r = next();
      // Plain comparisons in the loop (an expect each would take the test's time): the first
      // disagreement fails with the operation that showed it.
      if (r < 0.45) {
        table.set(key, op);
        map.set(key, op);
      } else if (r < 0.9) {
        const [ours, maps] = [table.delete(key), map.delete(key)];
        if (ours !== maps) expect({ op, delete: key, ours }).toEqual({ op, delete: key, ours: maps });
      } else if (table.get(key) !== map.get(key)) {
        expect({ op, get: key, ours: table.get(key) }).toEqual({ op, get: key, ours: map.get(key) });
      }
      if (op % 1000 === 0) expectSame(table, map, pool);
    }
    expectSame(table, map, pool);
    for (const key of pool) expect(table.delete(key)).toBe(map.delete(key));
    expect(table.size).toBe(0);
  }

  it('keeps every entry through growth, then empties', () => {
    const table = new StringTable<number>(16);
    const keys = Array.from({ length: 5_000 }, (_, i) => `k${i}`);
    keys.forEach((k, i) => table.set(k, i));
    expect(table.size).toBe(5_000);
    keys.forEach((k, i) => expect(table.get(k)).toBe(i));
    for (let i = 0; i < keys.length; i += 2) expect(table.delete(keys[i] as string)).toBe(true);
    keys.forEach((k, i) => expect(table.get(k)).toBe(i % 2 === 0 ? undefined : i));
    for (let i = 1; i < keys.length; i += 2) table.delete(keys[i] as string);
    expect(table.size).toBe(0);
    expect(keys.every((k) => table.get(k) === undefined)).toBe(true);
  });
});
