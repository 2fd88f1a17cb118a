import pino from 'pino';
import { createLogger, createMemoryLogger, gatheredTo, type Logger } from '@repo/service';
import { buildsLineItself, requestLineWriter, str, type RequestLine } from '../src/request-log';

/** A pino logger writing its lines into `out`, with the service's shape (name, base, redaction) and a fixed time. */
function capturing(options: pino.LoggerOptions = {}): { logger: Logger; out: string[] } {
  const out: string[] = [];
  const logger = pino(serviceLike(options), { write: (line: string) => void out.push(line) });
  return { logger, out };
}

/** The service logger's options (name, base, redaction) with a fixed time. */
function serviceLike(options: pino.LoggerOptions): pino.LoggerOptions {
  return {
    name: 'rpc-proxy',
    base: { service: 'rpc-proxy' },
    timestamp: () => ',"time":"2026-11-23T04:00:00.000Z"',
    redact: { paths: ['password', 'authorization', 'key', 'secret', 'token', 'headers.authorization'], censor: '[redacted]' },
    ...options,
  };
}

const line = (over: Partial<RequestLine> = {}): RequestLine => ({
  method: 'POST',
  path: '/',
  status: 200,
  rpc: 'getblockhash',
  user: 'alice',
  ip: '127.0.0.1',
  request_id: '0b6f1f58-6d2f-4c1e-9a51-3c1c5f0e7a10',
  ms: 1.23,
  ...over,
});

/** Strings a client can put in the line's fields (path, rpc, request id through a trusted proxy). */
const odd = [
  '',
  'plain',
  'quote " inside',
  'back\\slash',
  'both "\\" ',
  'tab\there',
  'new\nline',
  '\u0000\u001f',
  'é ü ß 中文',
  '\u2028\u2029',
  'emoji 😀',
  'x'.repeat(150),
  `${'y'.repeat(120)}"`,
  '/wallet/a%20b',
  'batch(3)',
];

describe('the request log line (docs/README.md, "Logging")', () => {
  it('is byte for byte what pino writes for the same fields', () => {
    const { logger, out } = capturing();
    expect(buildsLineItself(logger)).toBe(true);
    const write = requestLineWriter(logger);
    const cases: RequestLine[] = [
      line(),
      line({ user: undefined }),
      line({ method: undefined }),
      line({ status: 0, ms: 0 }),
      line({ status: 503, ms: 12345.67 }),
      line({ ms: Number.NaN }),
      ...[0.01, 0.05, 0.1, 0.5, 1, 2.5, 10.01, 99.99, 1e11 + 0.25, 1e12, 1e21, 1.2345, -1.5, -0].map((ms) => line({ ms })),
      ...[100, 204, 429, 999999].map((status) => line({ status })),
      ...odd.flatMap((s) => [line({ path: s }), line({ rpc: s }), line({ request_id: s }), line({ user: s }), line({ ip: s })]),
    ];
    for (const fields of cases) {
      write(fields);
      logger.info(fields, 'request');
    }
    expect(out).toHaveLength(cases.length * 2);
    for (let i = 0; i < cases.length; i++) expect(out[2 * i]).toBe(out[2 * i + 1]);
    expect(out[0]).toBe(
      '{"level":30,"time":"2026-11-23T04:00:00.000Z","service":"rpc-proxy","name":"rpc-proxy","method":"POST","path":"/","status":200,' +
        '"rpc":"getblockhash","user":"alice","ip":"127.0.0.1","request_id":"0b6f1f58-6d2f-4c1e-9a51-3c1c5f0e7a10","ms":1.23,"msg":"request"}\n',
    );
  });

  it("is pino's line too when written as bytes into the service's gathered destination", () => {
    const writes: Buffer[] = [];
    const destination = gatheredTo({ write: (b: Buffer) => writes.push(Buffer.from(b)), flushSync: () => undefined, on: () => undefined });
    const logger = pino(serviceLike({}), destination);
    expect(buildsLineItself(logger)).toBe(true);
    const write = requestLineWriter(logger);
    const cases = [line(), line({ user: undefined, ms: 0.07 }), ...odd.map((s) => line({ path: s, rpc: s, ip: s }))];
    for (const fields of cases) {
      write(fields);
      logger.info(fields, 'request');
    }
    destination.flush();
    const out = Buffer.concat(writes).toString('utf8').split('\n');
    expect(out).toHaveLength(cases.length * 2 + 1);
    for (let i = 0; i < cases.length; i++) expect(out[2 * i]).toBe(out[2 * i + 1]);
    expect(out[0]).toContain('"request_id":"0b6f1f58-6d2f-4c1e-9a51-3c1c5f0e7a10","ms":1.23,"msg":"request"}');
  });

  it('carries a child logger bindings as pino does', () => {
    const { logger, out } = capturing();
    const child = logger.child({ component: 'json-rpc' });
    requestLineWriter(child)(line());
    child.info(line(), 'request');
    expect(out[0]).toBe(out[1]);
    expect(out[0]).toContain('"component":"json-rpc"');
  });

  it('escapes a lone surrogate half as JSON.stringify does (pino writes it raw), so the line parses back to the same text', () => {
    const { logger, out } = capturing();
    requestLineWriter(logger)(line({ rpc: 'a\ud800b' }));
    expect(out[0]).toContain('"rpc":"a\\ud800b"');
    expect((JSON.parse(out[0] as string) as { rpc: string }).rpc).toBe('a\ud800b');
    expect(str('a\ud800b')).toBe(JSON.stringify('a\ud800b'));
  });

  it("takes the service logger's options and is what pino writes with them", () => {
    const { logger, lines } = createMemoryLogger('info');
    expect(buildsLineItself(logger)).toBe(true);
    requestLineWriter(logger)(line());
    logger.info(line(), 'request');
    expect(lines).toHaveLength(2);
    const [mine, theirs] = lines as unknown as [Record<string, unknown>, Record<string, unknown>];
    delete mine.time;
    delete theirs.time;
    expect(mine).toEqual(theirs);
    expect(Object.keys(mine)).toEqual(Object.keys(theirs));
    expect(mine).toMatchObject({ level: 30, service: 'test', msg: 'request', rpc: 'getblockhash' });
  });

  it("builds the line itself for the service's logger on stdout", () => {
    expect(buildsLineItself(createLogger({ name: 'rpc-proxy', level: 'info' }))).toBe(true);
  });

  it.each<[string, pino.LoggerOptions]>([
    ['a log formatter', { formatters: { log: (o) => ({ ...o, extra: 1 }) } }],
    ['a mixin', { mixin: () => ({ extra: 1 }) }],
    ['a message prefix', { msgPrefix: '[proxy] ' }],
    ['a nested key', { nestedKey: 'payload' }],
    ['a serializer of one of its fields', { serializers: { path: (p: string) => p.toUpperCase() } }],
    ['redaction of one of its fields', { redact: ['user'] }],
    ['a wildcard redaction', { redact: ['*.secret'] }],
    [
      'a log-method hook',
      {
        hooks: {
          logMethod(args, method) {
            method.apply(this, [{ ...(args[0] as object), extra: 1 }, args[1]]);
          },
        },
      },
    ],
    ['a write hook', { hooks: { streamWrite: (s: string) => s.replace('request', 'REQUEST') } }],
  ])('leaves the line to pino when the logger has %s', (_what, options) => {
    const { logger, out } = capturing(options);
    expect(buildsLineItself(logger)).toBe(false);
    requestLineWriter(logger)(line());
    logger.info(line(), 'request');
    expect(out[0]).toBe(out[1]);
  });
});
