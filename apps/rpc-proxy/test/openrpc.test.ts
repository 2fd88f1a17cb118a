import { validateOpenApiDocument, validateOpenRpcDocument } from '@repo/api-contract/testing';
import { RPC_ERROR_CODES } from '@repo/errors';
import { CHECKED_PARAMS, OPENRPC } from '../src/openrpc';
import { checkParams, DEFAULT_ALLOWED_METHODS, ParamError, SPEC_METHODS } from '../src/policy';
import { call, startHarness, type Harness } from './support/helpers';

describe('the OpenRPC document', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ RATE_LIMIT_PER_MINUTE: '3' });
  });

  afterAll(() => h.close());

  it('is a valid OpenRPC document, and its x-http part a valid OpenAPI 3.1 fragment', async () => {
    expect(await validateOpenRpcDocument(OPENRPC)).toEqual([]);
    const http = OPENRPC['x-http'];
    expect(
      await validateOpenApiDocument({
        openapi: '3.1.0',
        info: { title: 'x-http', version: '1' },
        servers: http.servers,
        paths: http.paths,
        components: { schemas: OPENRPC.components.schemas, securitySchemes: http.securitySchemes },
      }),
    ).toEqual([]);
  });

  it('lists every allowed method and every error code the proxy answers', () => {
    expect(OPENRPC.methods.map((m) => m.name).sort()).toEqual([...new Set([...SPEC_METHODS, ...DEFAULT_ALLOWED_METHODS])].sort());
    const codes = Object.values(OPENRPC.components.errors).map((e) => e.code);
    for (const code of Object.values(RPC_ERROR_CODES)) expect(codes).toContain(code);
  });

  it('gives each checked method the parameters the proxy checks: their number, order and which are required', () => {
    for (const [method, params] of Object.entries(CHECKED_PARAMS)) {
      // One parameter too many is refused with the count the proxy allows.
      expect(() => checkParams(method, new Array(params.length + 1).fill(1))).toThrow(`at most ${params.length}, got ${params.length + 1}`);
      const required = params.filter((p) => p.required).map((p) => String(p.name));
      for (const [i, p] of params.entries()) {
        // Named parameters: the document's names are the proxy's.
        try {
          checkParams(method, { [String(p.name)]: null });
        } catch (err) {
          expect(err).toBeInstanceOf(ParamError);
          expect((err as Error).message).not.toMatch(/unknown parameter/);
        }
        // Required parameters by position: omitting the first required one names it.
        if (i === 0 && required.length > 0) expect(() => checkParams(method, [])).toThrow(`missing parameter "${required[0]}"`);
      }
      if (required.length === 0) expect(() => checkParams(method, [])).not.toThrow();
    }
  });

  it('is served at /openrpc.json without authentication, cacheable, outside the rate limit', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${h.url}/openrpc.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(await res.json()).toEqual(JSON.parse(JSON.stringify(OPENRPC)));
    }
    expect((await call(h.url, 'getblockcount')).status).toBe(200);
  });
});
