import { validateOpenApiDocument } from '@repo/api-contract/testing';
import { OPENAPI } from '../src/openapi';
import { makeTempDir, removeDir, startService, testConfig, type RunningService } from './support/service';

describe('the OpenAPI document', () => {
  let dir: string;
  let running: RunningService;

  beforeAll(async () => {
    dir = makeTempDir();
    running = await startService(testConfig({ DATA_DIR: dir, RATE_LIMIT_PER_MINUTE: '1' }));
  });

  afterAll(async () => {
    await running.close();
    removeDir(dir);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(await validateOpenApiDocument(OPENAPI)).toEqual([]);
  });

  it('is served at /openapi.json and /storage/openapi.json, cacheable, outside the rate limit', async () => {
    for (const path of ['/openapi.json', '/storage/openapi.json', '/openapi.json']) {
      const res = await fetch(running.base + path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      expect(await res.json()).toEqual(JSON.parse(JSON.stringify(OPENAPI)));
    }
  });
});
