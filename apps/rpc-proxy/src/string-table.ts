import { randomBytes } from 'node:crypto';

/**
 * A table from strings to values for entries that come and go all the time (the coalescer's
 * flights: one in and out per forwarded call), in place of a `Map` there
 * (docs/performance/rpc-proxy.md, "Fourteenth round").
 *
 * Why not a `Map`: V8 rebuilds a `Map`'s backing table when its entries come and go (it grows
 * past its capacity with deleted slots in it, it shrinks below a quarter full), and the table it
 * leaves behind keeps pointers to the entries it held and to the table that replaced it. Once the
 * `Map` lives in the old generation, each such left-behind table does too until the next full
 * collection, and every young-generation collection keeps alive whatever it points to: the keys,
 * the values, the next table, and through it the next. Under the proxy's load that made almost
 * every call's key and flight survive to the old generation (96 % of what outlived each young
 * collection was promoted), and the young collections four to five times as long.
 *
 * This table keeps its arrays for good (they only grow, when more than half full) and empties a
 * slot by writing `undefined` into it, so nothing it held outlives its entry. Open addressing with
 * linear probing and backward-shift deletion (no tombstones); the hash is FNV-1a over the UTF-16
 * code units from a random seed of the table's own, then a final mix, so a client cannot choose
 * keys that collide without knowing the seed.
 */
export class StringTable<V> {
  // Set by #allocate (from the constructor, then each time the table grows).
  #keys!: (string | undefined)[];
  #values!: (V | undefined)[];
  #hashes!: Int32Array;
  #mask!: number;
  #size = 0;
  readonly #seed: number;

  /**
   * `capacity`: slots to start with, rounded up to a power of two (at least 16); `seed`: the
   * hash's seed (a random one by default; tests give theirs, to replay a placement).
   */
  constructor(capacity = 64, seed = randomBytes(4).readUInt32LE(0)) {
    this.#seed = seed | 0;
    let slots = 16;
    while (slots < capacity) slots *= 2;
    this.#allocate(slots);
  }

  /** Entries in the table. */
  get size(): number {
    return this.#size;
  }

  /** The value of `key`, or undefined. */
  get(key: string): V | undefined {
    const slot = this.#find(key, hashOf(key, this.#seed));
    return slot < 0 ? undefined : this.#values[slot];
  }

  /** Sets the value of `key` (added, or replaced when present). */
  set(key: string, value: V): void {
    const hash = hashOf(key, this.#seed);
    const found = this.#find(key, hash);
    if (found >= 0) {
      this.#values[found] = value;
      return;
    }
    if (2 * (this.#size + 1) > this.#keys.length) this.#grow();
    this.#place(key, value, hash);
    this.#size++;
  }

  /** Removes `key`; true when it was there. */
  delete(key: string): boolean {
    let hole = this.#find(key, hashOf(key, this.#seed));
    if (hole < 0) return false;
    const keys = this.#keys;
    const mask = this.#mask;
    // Backward-shift deletion: the entries after the hole, up to the next empty slot, move back
    // into it when their home slot is not between the hole and where they are.
    for (let next = (hole + 1) & mask; keys[next] !== undefined; next = (next + 1) & mask) {
      const home = (this.#hashes[next] as number) & mask;
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      keys[hole] = keys[next];
      this.#values[hole] = this.#values[next];
      this.#hashes[hole] = this.#hashes[next] as number;
      hole = next;
    }
    keys[hole] = undefined;
    this.#values[hole] = undefined;
    this.#size--;
    return true;
  }

  /** The slot of `key`, or -1. */
  #find(key: string, hash: number): number {
    const keys = this.#keys;
    const mask = this.#mask;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const k = keys[slot];
      if (k === undefined) return -1;
      if (this.#hashes[slot] === hash && k === key) return slot;
    }
  }

  /** Puts an entry not in the table into the first empty slot from its home (there is one: at most half are used). */
  #place(key: string, value: V | undefined, hash: number): void {
    let slot = hash & this.#mask;
    while (this.#keys[slot] !== undefined) slot = (slot + 1) & this.#mask;
    this.#keys[slot] = key;
    this.#values[slot] = value;
    this.#hashes[slot] = hash;
  }

  /** Twice the slots, every entry placed again. */
  #grow(): void {
    const keys = this.#keys;
    const values = this.#values;
    const hashes = this.#hashes;
    this.#allocate(2 * keys.length);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (key !== undefined) this.#place(key, values[i], hashes[i] as number);
    }
  }

  /** Empty arrays of `slots` slots (a power of two). */
  #allocate(slots: number): void {
    this.#keys = new Array<string | undefined>(slots).fill(undefined);
    this.#values = new Array<V | undefined>(slots).fill(undefined);
    this.#hashes = new Int32Array(slots);
    this.#mask = slots - 1;
  }
}

// Bound once: where globals are looked up through an interceptor (a `vm` context, as jest runs
// tests), `Math.imul` in the loop costs a lookup of `Math` per code unit.
const { imul } = Math;

/** FNV-1a of the string's UTF-16 code units from `seed`, then murmur3's 32-bit finalizer (as a signed integer). */
function hashOf(key: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < key.length; i++) h = imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = imul(h, 0xc2b2ae35);
  // A 32-bit signed integer: a small integer to V8, never a heap number.
  return h ^ (h >>> 16);
}
