/** A byte-bounded LRU of immutable answers: key → the exact bytes of the node's `result` (JSON text). */
export interface ResultCache {
  get(key: string): Buffer | undefined;
  set(key: string, resultJson: Buffer): void;
  readonly bytes: number;
  readonly size: number;
  readonly hits: number;
  readonly misses: number;
}

/**
 * Creates the cache. Entries are Buffers (sent as they are: no string to measure or encode
 * per answer), keys strings (2 bytes a character counted, as V8 may keep them);
 * the least recently used go first once `maxBytes` is reached; an entry larger than a
 * quarter of the budget is never kept, so one huge block cannot flush everything.
 */
export function createResultCache(maxBytes: number): ResultCache {
  const map = new Map<string, Buffer>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;
  const cost = (key: string, value: Buffer) => 2 * key.length + value.length + 64;
  return {
    get(key) {
      const value = map.get(key);
      if (value === undefined) {
        misses++;
        return undefined;
      }
      hits++;
      map.delete(key);
      map.set(key, value);
      return value;
    },
    set(key, value) {
      const c = cost(key, value);
      if (maxBytes <= 0 || c > maxBytes / 4) return;
      const old = map.get(key);
      if (old !== undefined) {
        bytes -= cost(key, old);
        map.delete(key);
      }
      map.set(key, value);
      bytes += c;
      for (const [k, v] of map) {
        if (bytes <= maxBytes) break;
        map.delete(k);
        bytes -= cost(k, v);
      }
    },
    get bytes() {
      return bytes;
    },
    get size() {
      return map.size;
    },
    get hits() {
      return hits;
    },
    get misses() {
      return misses;
    },
  };
}
