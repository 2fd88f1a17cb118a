import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateOpenApiDocument } from '@repo/api-contract/testing';
import { OPENAPI } from '../src/openapi';
import { startService, type RunningService } from './support/service';

describe('the OpenAPI document', () => {
  let dir: string;
  let running: RunningService;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sp-openapi-'));
    running = await startService({
      DATA_DIR: dir,
      SCANNER_ENABLED: 'false',
      CHAIN_RPC_URL: 'http://127.0.0.1:9',
      RATE_LIMIT_PER_MINUTE: '1',
    });
  });

  afterAll(async () => {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(await validateOpenApiDocument(OPENAPI)).toEqual([]);
  });

  it('declares SP_API_TOKEN as a bearer scheme that every POST takes (with its 401), every read open', () => {
    expect(OPENAPI.components.securitySchemes).toEqual({ apiToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    const operations = Object.entries(OPENAPI.paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { security?: unknown; responses: Record<string, unknown> }>)
        .filter(([method]) => !method.startsWith('x-'))
        .map(([method, op]) => ({ path, method, op })),
    );
    const posts = operations.filter((o) => o.method === 'post');
    expect(posts.map((o) => o.path).sort()).toEqual(['/generate-address', '/psbt']);
    for (const { op } of posts) {
      expect(op.security).toEqual([{ apiToken: [] }, {}]);
      expect(op.responses['401']).toBeDefined();
    }
    for (const { op } of operations.filter((o) => o.method !== 'post')) expect(op.security).toEqual([]);
  });

  it("answers a POST without the token with the document's 401 while SP_API_TOKEN is set, on any path", async () => {
    const secured = await startService({
      DATA_DIR: join(dir, 'secured'),
      SCANNER_ENABLED: 'false',
      CHAIN_RPC_URL: 'http://127.0.0.1:9',
      SP_API_TOKEN: 'sp-token-for-the-document',
    });
    try {
      for (const path of ['/generate-address', '/psbt', '/payments', '/nowhere']) {
        const res = await fetch(`${secured.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="silent-payments"');
        expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED', error: 'authentication required' });
      }
    } finally {
      await secured.close();
    }
  });

  it('is served at /openapi.json, cacheable, outside the rate limit', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${running.url}/openapi.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      expect(await res.json()).toEqual(JSON.parse(JSON.stringify(OPENAPI)));
    }
  });
});
