/**
 * Delay before reconnection attempt `attempt` (0-based): exponential from `minMs`, capped at
 * `maxMs`, with "equal jitter" (half fixed, half random) so relays restarted together do not
 * reconnect in lock-step.
 */
export function backoffDelay(attempt: number, minMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
