import { validateOpenApiDocument } from '@repo/api-contract/testing';
import { OPENAPI } from '../src/openapi';
import { startTempService, type TempService } from './support/service';

describe('the OpenAPI document', () => {
  let running: TempService;
  beforeAll(async () => {
    running = await startTempService({ RATE_LIMIT_PER_MINUTE: '1' });
  });
  afterAll(() => running.close());

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
