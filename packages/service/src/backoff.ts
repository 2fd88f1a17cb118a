/** Options of {@link backoff}. */
export interface BackoffOptions {
  /** Delay of the first retry (attempt 0), in ms. */
  minMs: number;
  /** Ceiling of the delay, in ms. */
  maxMs: number;
  /**
   * `none`: the exponential delay itself. `equal`: half of it fixed, half random ("equal jitter"),
   * so peers restarted together do not retry in lock-step.
   */
  jitter?: 'none' | 'equal';
  /** Source of randomness in [0, 1) (tests pass a constant). */
  random?: () => number;
}

/**
 * Delay before retry `attempt` (0-based): `minMs * 2^attempt`, capped at `maxMs`, with optional
 * jitter. The one retry schedule of the services (reconnecting to a peer, a relay, Redis, a node).
 */
export function backoff(attempt: number, options: BackoffOptions): number {
  const { minMs, maxMs } = options;
  const exponent = Math.min(Math.max(0, Math.floor(attempt)), 30);
  const ceiling = Math.min(maxMs, minMs * 2 ** exponent);
  if ((options.jitter ?? 'none') === 'none') return ceiling;
  const random = options.random ?? Math.random;
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
