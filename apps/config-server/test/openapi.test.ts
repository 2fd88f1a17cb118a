import { validateOpenApiDocument } from '@repo/api-contract/testing';
import { OPENAPI } from '../src/openapi';
import { get, startServer, type Harness } from './support/harness';

describe('the OpenAPI document', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startServer({ RATE_LIMIT_PER_MINUTE: '2', RATE_LIMIT_PER_SECOND: '0' });
  });

  afterAll(() => h.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(await validateOpenApiDocument(OPENAPI)).toEqual([]);
  });

  it('is served at /openapi.json with the common headers, cacheable, outside the rate limit', async () => {
    for (let i = 0; i < 4; i++) {
      const res = await get(h, '/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      expect(res.headers['api-version']).toBe('1.0.0');
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      expect(res.json()).toEqual(JSON.parse(JSON.stringify(OPENAPI)));
    }
    expect((await get(h, '/openapi.json', {}, 'POST')).status).toBe(404);
  });
});
