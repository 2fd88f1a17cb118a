import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { documentHandler } from '../src';
import {
  createAsyncApiMessageCheck,
  createContractRecorder,
  createOpenApiCheck,
  createOpenRpcCheck,
  validateAsyncApiDocument,
  validateOpenApiDocument,
  validateOpenRpcDocument,
} from '../src/testing';

const OPENAPI = {
  openapi: '3.1.0',
  info: { title: 'example', version: '1.0.0' },
  servers: [{ url: 'http://127.0.0.1:8080' }],
  security: [{ token: [] }],
  paths: {
    '/things/{id}': {
      get: {
        summary: 'A thing',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'the thing',
            headers: { 'X-Thing': { required: true, schema: { type: 'string', pattern: '^[0-9]+$' } } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
          '404': { description: 'none', content: { 'text/plain': { schema: { type: 'string' } } } },
        },
      },
    },
    '/files/{path}': {
      get: {
        summary: 'A file',
        security: [],
        parameters: [{ name: 'path', in: 'path', required: true, schema: { type: 'string' }, 'x-multi-segment': true }],
        responses: {
          '200': { description: 'a file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        },
      },
    },
  },
  'x-unmatched-paths': { responses: { '404': { description: 'no route' } } },
  components: {
    securitySchemes: { token: { type: 'http', scheme: 'bearer' } },
    schemas: { Thing: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } }, additionalProperties: false } },
  },
};

/** A server answering what each path asks for. */
async function serve(handler: (path: string) => { status: number; headers?: Record<string, string>; body?: string }): Promise<Server> {
  const server = createServer((req, res) => {
    const { status, headers, body } = handler(req.url ?? '/');
    res.writeHead(status, headers);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const base = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

describe('validators', () => {
  it('accepts a valid OpenAPI 3.1 document and names what is wrong in a broken one', async () => {
    expect(await validateOpenApiDocument(OPENAPI)).toEqual([]);
    const broken = structuredClone(OPENAPI) as Record<string, any>;
    delete broken.paths['/things/{id}'].get.responses['200'].description;
    const problems = await validateOpenApiDocument(broken);
    expect(problems.join('\n')).toMatch(/description/);
  });

  it("names the errors of Redocly's recommended rules: an operation without summary or security", async () => {
    const loose = structuredClone(OPENAPI) as Record<string, any>;
    delete loose.security;
    delete loose.paths['/things/{id}'].get.summary;
    const problems = await validateOpenApiDocument(loose);
    expect(problems).toEqual([
      expect.stringMatching(/^redocly operation-summary at #\/paths\/~1things~1\{id\}\/get\/summary: /),
      expect.stringMatching(/^redocly security-defined at #\/paths\/~1things~1\{id\}\/get: /),
    ]);
  });

  it('validates OpenRPC and AsyncAPI documents', async () => {
    const rpc = {
      openrpc: '1.3.2',
      info: { title: 't', version: '1' },
      methods: [{ name: 'm', params: [], result: { name: 'r', schema: {} } }],
    };
    expect(await validateOpenRpcDocument(rpc)).toEqual([]);
    expect((await validateOpenRpcDocument({ ...rpc, methods: [{ params: [] }] })).length).toBeGreaterThan(0);
    const async = {
      asyncapi: '3.0.0',
      info: { title: 't', version: '1' },
      channels: { c: { address: '/', messages: { m: { $ref: '#/components/messages/m' } } } },
      operations: { o: { action: 'receive', channel: { $ref: '#/channels/c' }, messages: [{ $ref: '#/channels/c/messages/m' }] } },
      components: { messages: { m: { payload: { type: 'object', required: ['type'], properties: { type: { const: 'm' } } } } } },
    };
    expect(await validateAsyncApiDocument(async)).toEqual([]);
    expect((await validateAsyncApiDocument({ ...async, operations: { o: { action: 'shout' } } })).length).toBeGreaterThan(0);
    const check = createAsyncApiMessageCheck(async);
    expect(check({ type: 'm' })).toEqual([]);
    expect(check({ type: 'x' })).toHaveLength(1);
  });
});

describe('the recorder with an OpenAPI check', () => {
  it('passes described responses and names every undescribed one', async () => {
    const recorder = createContractRecorder(createOpenApiCheck(OPENAPI), { name: 'example' });
    const server = await serve((path): { status: number; headers?: Record<string, string>; body?: string } => {
      switch (path) {
        case '/things/1':
          return { status: 200, headers: { 'Content-Type': 'application/json', 'X-Thing': '1' }, body: '{"id":1}' };
        case '/things/2':
          return { status: 200, headers: { 'Content-Type': 'application/json', 'X-Thing': '2' }, body: '{"id":"two"}' };
        case '/things/3':
          return { status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"id":3}' };
        case '/things/4':
          return { status: 500, body: 'boom' };
        case '/files/a/b/c.txt?x=1':
          return { status: 200, headers: { 'Content-Type': 'application/octet-stream' }, body: 'bytes' };
        case '/things/5':
          return { status: 404, headers: { 'Content-Type': 'application/json' }, body: '{}' };
        default:
          return { status: 404 };
      }
    });
    recorder.attach(server);
    try {
      for (const path of ['/things/1', '/files/a/b/c.txt?x=1', '/nowhere']) await (await fetch(base(server) + path)).arrayBuffer();
      expect(recorder.verify()).toBe(3);
      for (const path of ['/things/2', '/things/3', '/things/4', '/things/5']) await (await fetch(base(server) + path)).arrayBuffer();
      expect(() => recorder.verify()).toThrow(/4 of 7 responses not described/);
      expect(recorder.problems.join('\n')).toMatch(/\/things\/2 → 200: body: \/id must be integer/);
      expect(recorder.problems.join('\n')).toMatch(/\/things\/3 → 200: required header X-Thing missing/);
      expect(recorder.problems.join('\n')).toMatch(/\/things\/4 → 500: status not described/);
      expect(recorder.problems.join('\n')).toMatch(/\/things\/5 → 404: content type application\/json not among text\/plain/);
    } finally {
      server.close();
    }
  });

  it('serves a document with Cache-Control and a JSON content type', async () => {
    const handler = documentHandler(OPENAPI);
    const server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`${base(server)}/openapi.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(await res.json()).toEqual(OPENAPI);
    } finally {
      server.close();
    }
  });
});

describe('the OpenRPC check', () => {
  const RPC = {
    openrpc: '1.3.2',
    info: { title: 't', version: '1' },
    methods: [
      {
        name: 'getblockcount',
        params: [],
        result: { name: 'count', schema: { type: 'integer', minimum: 0 } },
        errors: [{ code: -28, message: 'warming up' }],
      },
    ],
    'x-errors': [{ code: -32601, message: 'Method not found' }],
    'x-http': {
      paths: {
        '/': { post: { responses: { '200': { description: 'answer', content: { 'application/json': { schema: {} } } } } } },
      },
    },
  };

  it('matches answers to calls by id and checks results and error codes', async () => {
    const recorder = createContractRecorder(createOpenRpcCheck(RPC));
    let answer = '';
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(answer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    recorder.attach(server);
    const call = async (body: unknown, reply: unknown) => {
      answer = JSON.stringify(reply);
      await (await fetch(base(server), { method: 'POST', body: JSON.stringify(body) })).arrayBuffer();
    };
    try {
      await call({ id: 1, method: 'getblockcount' }, { id: 1, result: 5, error: null });
      await call(
        [
          { id: 'a', method: 'getblockcount' },
          { id: 'b', method: 'nope' },
        ],
        [
          { id: 'b', result: null, error: { code: -32601, message: 'Method not found' } },
          { id: 'a', result: null, error: { code: -28, message: 'loading' } },
        ],
      );
      expect(recorder.verify()).toBe(2);
      await call({ id: 2, method: 'getblockcount' }, { id: 2, result: -1, error: null });
      await call({ id: 3, method: 'getblockcount' }, { id: 3, result: null, error: { code: -5, message: 'x' } });
      expect(recorder.problems).toEqual([
        'POST / → 200: result of getblockcount: (root) must be >= 0',
        'POST / → 200: error code -5 of getblockcount not described',
      ]);
    } finally {
      server.close();
    }
  });
});
