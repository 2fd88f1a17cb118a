import { backoff } from '../src';

describe('backoff', () => {
  it('doubles from minMs and stops at maxMs without jitter', () => {
    const delays = [0, 1, 2, 3, 4, 5].map((attempt) => backoff(attempt, { minMs: 100, maxMs: 1_000 }));
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('keeps half the delay fixed and draws the other half with equal jitter', () => {
    expect(backoff(0, { minMs: 100, maxMs: 1_000, jitter: 'equal', random: () => 0 })).toBe(50);
    expect(backoff(0, { minMs: 100, maxMs: 1_000, jitter: 'equal', random: () => 1 })).toBe(100);
    expect(backoff(3, { minMs: 100, maxMs: 1_000, jitter: 'equal', random: () => 1 })).toBe(800);
    expect(backoff(10, { minMs: 100, maxMs: 1_000, jitter: 'equal', random: () => 0.5 })).toBe(750);
  });

  it('stays finite for huge or negative attempt counts', () => {
    expect(backoff(1e9, { minMs: 50, maxMs: 2_000 })).toBe(2_000);
    expect(backoff(-3, { minMs: 50, maxMs: 2_000 })).toBe(50);
    const spread = new Set(Array.from({ length: 50 }, () => backoff(2, { minMs: 100, maxMs: 10_000, jitter: 'equal' })));
    for (const d of spread) expect(d).toBeGreaterThanOrEqual(200);
    for (const d of spread) expect(d).toBeLessThanOrEqual(400);
    expect(spread.size).toBeGreaterThan(1);
  });
});
