import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { cachedIsoTime, createMemoryLogger, gatheredTo, LOG_GATHER_BYTES, LOG_GATHER_MS, type ByteOut } from '../src/logger';

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

describe('createLogger', () => {
  const DIST = join(__dirname, '..', 'dist', 'index.js');

  /** Runs `body` in a child with `logger` made by createLogger; its stdout lines, parsed. */
  function logLines(body: string): Promise<{ code: number | null; lines: Record<string, unknown>[] }> {
    const script = `const logger = require(${JSON.stringify(DIST)}).createLogger({ name: 'probe' }); ${body}`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    return new Promise((done) =>
      child.once('close', (code: number | null) =>
        done({
          code,
          lines: out
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Record<string, unknown>),
        }),
      ),
    );
  }

  it('writes every line of a burst, in order, though the writes are asynchronous', async () => {
    const { code, lines } = await logLines(`for (let i = 0; i < 2000; i++) logger.info({ i }, 'request');`);
    expect(code).toBe(0);
    expect(lines).toHaveLength(2000);
    expect(lines.map((l) => l['i'])).toEqual([...Array(2000).keys()]);
    expect(lines[0]).toMatchObject({ service: 'probe', msg: 'request' });
  }, 20_000);

  it('keeps the lines logged just before process.exit (a fatal start failure)', async () => {
    const { code, lines } = await logLines(
      `for (let i = 0; i < 100; i++) logger.info({ i }, 'x'); logger.fatal('failed to start'); process.exit(1);`,
    );
    expect(code).toBe(1);
    expect(lines).toHaveLength(101);
    expect(lines[100]).toMatchObject({ level: 60, msg: 'failed to start' });
  }, 20_000);
});

describe('gatheredTo', () => {
  /** A byte sink that keeps each write (a copy: the destination must not reuse what it handed over). */
  function sink(): ByteOut & { writes: Buffer[]; text(): string } {
    const writes: Buffer[] = [];
    return {
      writes,
      write: (bytes: Buffer) => writes.push(Buffer.from(bytes)),
      flushSync: () => undefined,
      on: () => undefined,
      text: () => Buffer.concat(writes).toString('utf8'),
    };
  }

  it('hands lines written as strings and as bytes in place together, in order, as UTF-8', () => {
    const out = sink();
    const destination = gatheredTo(out);
    destination.write('{"a":"é"}\n');
    const line = Buffer.from('{"b":"中文 😀"}\n');
    destination.reserve(line.length);
    line.copy(destination.buffer, destination.length);
    destination.length += line.length;
    destination.wrote();
    destination.write('{"c":3}\n');
    expect(out.writes).toHaveLength(0);
    destination.flush();
    expect(out.writes).toHaveLength(1);
    expect(out.text()).toBe('{"a":"é"}\n{"b":"中文 😀"}\n{"c":3}\n');
  });

  it(`hands what is gathered at once past ${LOG_GATHER_BYTES} bytes, and after ${LOG_GATHER_MS} ms otherwise`, async () => {
    const out = sink();
    const destination = gatheredTo(out);
    const line = `${'x'.repeat(99)}\n`;
    const below = Math.floor(LOG_GATHER_BYTES / line.length);
    for (let i = 0; i < below; i++) destination.write(line);
    expect(out.writes).toHaveLength(0);
    destination.write(line);
    expect(out.writes).toHaveLength(1);
    expect(out.writes[0]!.length).toBeGreaterThanOrEqual(LOG_GATHER_BYTES);
    destination.write('last\n');
    await new Promise((r) => setTimeout(r, LOG_GATHER_MS * 3));
    expect(out.writes).toHaveLength(2);
    expect(out.text()).toBe(line.repeat(below + 1) + 'last\n');
  });

  it('takes a line longer than its buffer, whole', () => {
    const out = sink();
    const destination = gatheredTo(out);
    destination.write('first\n');
    const long = `${'y'.repeat(LOG_GATHER_BYTES * 5)}\n`;
    destination.write(long);
    destination.flush();
    expect(out.text()).toBe(`first\n${long}`);
  });
});
