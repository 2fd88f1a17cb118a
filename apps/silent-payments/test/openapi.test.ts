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
