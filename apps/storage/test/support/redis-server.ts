import { randomBytes } from 'node:crypto';
import { startRedis, type RedisHandle } from '@repo/redis/testing';

// startRedis lives in @repo/redis/testing (shared with the relay's Redis suites); re-exported for the benchmark.
export { startRedis, type RedisHandle, type StartRedisOptions } from '@repo/redis/testing';

/**
 * For a suite run against `backend`: starts Redis before the suite when it is `redis` (and
 * stops it, with this suite's keys removed, after), and returns the environment the service
 * needs for that backend. A key prefix per suite keeps a shared REDIS_URL clean and runs apart.
 */
export function useBackend(backend: 'sqlite' | 'redis'): () => Record<string, string> {
  let redis: RedisHandle | undefined;
  const prefix = `storage-test:${randomBytes(6).toString('hex')}:`;
  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
  });
  afterAll(async () => {
    if (redis) {
      await redis.cleanup(prefix);
      await redis.stop();
    }
  });
  return () => ({ STORAGE_BACKEND: backend, ...(redis ? { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix } : {}) });
}
