import { cachedIsoTime, createMemoryLogger } from '../src/logger';

describe('cachedIsoTime', () => {
  it("writes pino's isoTime field, formatted once per millisecond", () => {
    let now = Date.UTC(2026, 10, 21, 18, 0, 0, 5);
    let formatted = 0;
    const realToIso = Date.prototype.toISOString;
    const spy = jest.spyOn(Date.prototype, 'toISOString').mockImplementation(function (this: Date) {
      formatted++;
      return realToIso.call(this);
    });
    try {
      const time = cachedIsoTime(() => now);
      expect(time()).toBe(',"time":"2026-11-21T18:00:00.005Z"');
      expect(time()).toBe(',"time":"2026-11-21T18:00:00.005Z"');
      expect(formatted).toBe(1);
      now += 1;
      expect(time()).toBe(',"time":"2026-11-21T18:00:00.006Z"');
      expect(formatted).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('stamps every service log line with the current ISO time', () => {
    const { logger, lines } = createMemoryLogger('info');
    const before = Date.now();
    logger.info('hello');
    const stamped = Date.parse(lines[0]!['time'] as string);
    expect(stamped).toBeGreaterThanOrEqual(before);
    expect(stamped).toBeLessThanOrEqual(Date.now());
    expect(lines[0]!['time']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});
