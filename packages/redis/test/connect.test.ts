import { randomBytes } from 'node:crypto';
import { startTcpForwarder, type TcpForwarder } from '@repo/http/testing';
import { createMemoryLogger } from '@repo/service';
import { connectRedis, type RedisClient } from '../src';
import { startRedis, type RedisHandle } from '../src/testing';

const waitFor = async (check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('connectRedis', () => {
  let redis: RedisHandle;
  let forwarder: TcpForwarder;
  let client: RedisClient | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    forwarder = await startTcpForwarder({ port: Number(new URL(redis.url).port) });
  });
  afterEach(async () => {
    if (client?.isOpen) await client.close();
    client = undefined;
  });
  afterAll(async () => {
    await forwarder.close();
    await redis.stop();
  });

  const urlThrough = (port: number): string => {
    const u = new URL(redis.url);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    return u.toString();
  };

  it('connects, and commands go through', async () => {
    client = await connectRedis({ url: urlThrough(forwarder.port) });
    expect(await client.ping()).toBe('PONG');
  });

  it('rejects within the start deadline, naming REDIS_URL but not the URL', async () => {
    const closed = await startTcpForwarder({ port: Number(new URL(redis.url).port) });
    await closed.down();
    const url = `redis://user:secret-password@127.0.0.1:${closed.port}`;
    const started = Date.now();
    const refused = await connectRedis({ url, connectTimeoutMs: 300 }).catch((err: unknown) => err);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/^cannot connect to Redis \(REDIS_URL\): /);
    expect((refused as Error).message).not.toContain('secret-password');
    expect((refused as Error).cause).toBeDefined();
    await closed.close();
  });

  it('warns once while Redis is away, says when it is back, and works again on the same client', async () => {
    const { logger, lines } = createMemoryLogger();
    const key = `connect-test:${randomBytes(6).toString('hex')}`;
    client = await connectRedis({ url: urlThrough(forwarder.port), logger, logPrefix: 'event log: ' });
    await client.set(key, '1');
    await forwarder.down();
    // Retries every 50 ms doubling to 2 s: several failed attempts in this time, one warning.
    await new Promise((r) => setTimeout(r, 1_500));
    const warnings = lines.filter((r) => r.msg === 'event log: redis connection error');
    expect(warnings).toHaveLength(1);
    await forwarder.up();
    await waitFor(() => lines.some((r) => r.msg === 'event log: redis connection restored'));
    expect(await client.get(key)).toBe('1');
    await client.del(key);
  });
});
