import { validateAsyncApiDocument, validateOpenApiDocument } from '@repo/api-contract/testing';
import { MESSAGES } from '@repo/relay-protocol';
import { ASYNCAPI } from '../src/asyncapi';
import { OPENAPI } from '../src/openapi';
import { TestClient, connect, removeTempDirs, startRelay, type TestRelay } from './support/helpers';

describe('the API documents', () => {
  let relay: TestRelay;

  beforeAll(async () => {
    relay = await startRelay({ RATE_LIMIT_PER_MINUTE: '1' });
  });

  afterAll(async () => {
    await relay.close();
    removeTempDirs();
  });

  it('the OpenAPI document of the HTTP API is valid OpenAPI 3.1', async () => {
    expect(await validateOpenApiDocument(OPENAPI)).toEqual([]);
  });

  it('the AsyncAPI document of the WebSocket is valid AsyncAPI 3 and has every message of the protocol table', async () => {
    expect(await validateAsyncApiDocument(ASYNCAPI)).toEqual([]);
    expect(Object.keys(ASYNCAPI.components.messages).sort()).toEqual(Object.keys(MESSAGES).sort());
  });

  it('declares the WebSocket tokens as security schemes of the upgrade, and its 401 is the one answered', async () => {
    expect(Object.keys(OPENAPI.components.securitySchemes).sort()).toEqual([
      'clientToken',
      'clientTokenQuery',
      'meshToken',
      'publishToken',
    ]);
    const upgrade = OPENAPI.paths['/'].get as { security: object[]; responses: Record<string, any> };
    expect(upgrade.security).toContainEqual({ publishToken: [] });
    const refused = new TestClient(`${relay.wsUrl}/?token=not-a-token-of-this-relay`);
    const answer = await refused.opened().catch((err: { status: number; headers: Record<string, string> }) => err);
    expect(answer).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer realm="relay"' } });
    expect(upgrade.responses['401'].content['application/json'].schema.properties.error.properties.code.enum).toEqual(['UNAUTHORIZED']);
  });

  it('serves both on the HTTP port, cacheable, outside the rate limit', async () => {
    for (const [path, doc] of [
      ['/openapi.json', OPENAPI],
      ['/asyncapi.json', ASYNCAPI],
      ['/openapi.json', OPENAPI],
    ] as const) {
      const res = await fetch(relay.httpUrl + path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      expect(await res.json()).toEqual(JSON.parse(JSON.stringify(doc)));
    }
  });

  it('describes what a client receives (checked for every message of every test by the shared client)', async () => {
    const client = await connect(relay.wsUrl);
    client.send({ type: 'ping', id: 'p1' });
    await client.next((m) => m.type === 'pong');
    client.send({ type: 'nonsense', id: 'n1' });
    const error = await client.next((m) => m.type === 'error');
    expect(error.data).toMatchObject({ code: 'INVALID_MESSAGE' });
    await client.close();
  });
});
