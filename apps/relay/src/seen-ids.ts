/** Options of {@link createSeenIds}. */
export interface SeenIdsOptions {
  /** Ids remembered at most; past that the oldest are forgotten first. */
  maxIds: number;
  /** How long an id is remembered (ms). */
  ttlMs: number;
  /** Clock in ms, for tests. */
  now?: () => number;
}

/** The set of event ids a relay has already delivered, with bounded memory. */
export interface SeenIds {
  /** Records `id`; returns true the first time, false when it was already seen (and not yet forgotten). */
  add(id: string): boolean;
  has(id: string): boolean;
  readonly size: number;
}

/**
 * Creates the de-duplication set of the mesh: an event forwarded around a cycle comes back with
 * the same id and is dropped. A Map keeps insertion order, so the oldest ids are dropped first,
 * both by age and when the capacity is reached; memory stays at `maxIds` entries.
 */
export function createSeenIds(options: SeenIdsOptions): SeenIds {
  const now = options.now ?? Date.now;
  const seen = new Map<string, number>();

  function expire(t: number): void {
    for (const [id, at] of seen) {
      if (t - at < options.ttlMs && seen.size < options.maxIds) break;
      seen.delete(id);
    }
  }

  return {
    add(id) {
      const t = now();
      expire(t);
      if (seen.has(id)) return false;
      seen.set(id, t);
      return true;
    },
    has(id) {
      const at = seen.get(id);
      return at !== undefined && now() - at < options.ttlMs;
    },
    get size() {
      return seen.size;
    },
  };
}
