'use strict';
// Child process of bench.mjs: starts the chain double (argv[2] === 'double'), the proxy
// (argv[2] === 'proxy', node URL in argv[3], then the proxy's environment on top of the
// process's) or the bare forwarder (argv[2] === 'forwarder', node URL and its Authorization
// header in argv[3] and argv[4]) or the bare batching proxy (argv[2] === 'ceiling', the same
// arguments) or the proxy's front end and node client alone (argv[2] === 'layers', node URL and
// the node's cookie file in argv[3] and argv[4], as the proxy logs in) or a bare exchange (argv[2] === 'exchange', argv[3] 'http', 'front' or 'net') and prints one
// JSON line with what it listens on.
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/**
 * Mines a block of the size a busy signet block has (about 0.7 MB): 8 signed transactions,
 * each spending a funded output to 2,000 taproot outputs whose keys are fresh secp256k1 keys
 * (node:crypto). Returns its hash.
 */
function mineFullBlock(node, signSpend) {
  const { createECDH } = require('node:crypto');
  const txHexes = [];
  for (let t = 0; t < 8; t++) {
    const funded = node.fund('p2wpkh');
    const outputs = [];
    for (let i = 0; i < 2000; i++) {
      const ecdh = createECDH('secp256k1');
      const x = ecdh.generateKeys().subarray(1, 33);
      outputs.push({ script: Uint8Array.from([0x51, 0x20, ...x]), amount: 49_000n });
    }
    txHexes.push(signSpend([funded], outputs));
  }
  return node.mine(1, txHexes)[0];
}

/** Listens on a free loopback port and says where on stderr (the parent reads that line). */
async function announce(server) {
  const { listen } = require('@repo/service');
  const address = await listen(server, 0, '127.0.0.1');
  process.stderr.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
}

/** Calls `done` with a request's whole body. */
function readBody(req, done) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => done(Buffer.concat(chunks)));
}

/**
 * The least any HTTP proxy does, as a reference for the proxy's cost: a node:http server that
 * reads each request's body and sends it to the node over an undici Pool (16 connections, as the
 * proxy's NODE_MAX_CONCURRENCY), then writes the node's answer back. No authentication, checks,
 * batching, metrics or log line.
 */
async function forwarder(nodeUrl, authorization) {
  const { createServer } = require('node:http');
  const { Pool } = require('undici');
  const pool = new Pool(nodeUrl, { connections: 16, pipelining: 1 });
  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    readBody(req, (body) => {
      pool
        .request({ method: 'POST', path: req.url, headers: { authorization, 'content-type': 'application/json' }, body })
        .then(async ({ statusCode, body }) => {
          const answer = Buffer.from(await body.arrayBuffer());
          res.writeHead(statusCode, ['content-type', 'application/json', 'content-length', String(answer.length)]).end(answer);
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  process.once('SIGTERM', () => {
    server.close();
    void pool.close().finally(() => process.exit(0));
  });
  await announce(server);
}

/**
 * Calls `request(head, body)` for each whole message that arrives on `socket` (the head as
 * latin1 text, the body as bytes; HTTP/1.1 with a Content-Length body and nothing else
 * understood: not a usable HTTP server or client).
 */
function bareRequests(socket, request) {
  let pending = Buffer.alloc(0);
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  socket.on('data', (data) => {
    pending = pending.length > 0 ? Buffer.concat([pending, data]) : data;
    for (;;) {
      const end = pending.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = pending.toString('latin1', 0, end);
      const length = /content-length: *(\d+)/i.exec(head);
      const size = end + 4 + (length ? Number(length[1]) : 0);
      if (pending.length < size) return;
      const body = pending.subarray(end + 4, size);
      pending = pending.subarray(size);
      request(head, body);
    }
  });
}

/**
 * The least a batching proxy can cost, as the ceiling of what any proxy reaches here: bare
 * sockets toward the client and toward the node (no node:http, no undici), each path's calls
 * held while the path's batches are out and sent together as one JSON-RPC batch, with the
 * proxy's default NODE_BATCHES_IN_FLIGHT, NODE_BATCH_OVERLAP_CALLS and NODE_BATCH_OVERLAP_BATCHES
 * (read from its configuration; a lone call goes as a batch of one, and the proxy's 32-call cap
 * is never reached by the bench's 16 connections), Core's batch answer split back without a
 * parse; an answer that is not the batch's (not 200, or not as many elements) is a 502 to each of
 * its calls, which fails the bench's run. No
 * authentication, checks, request id, metrics or log line, no timeouts or limits, no HTTP
 * beyond Content-Length: not a proxy anyone could run, only its floor of CPU a call.
 */
async function ceiling(nodeUrl, authorization) {
  // The proxy's own defaults, read from its configuration: the ceiling batches as the proxy does.
  const defaults = require(join(__dirname, '..', 'dist', 'config')).loadConfig({});
  const IN_FLIGHT = defaults.nodeBatchesInFlight;
  const OVERLAP_CALLS = defaults.nodeBatchOverlapCalls;
  const OVERLAP_BATCHES = defaults.nodeBatchOverlapBatches;
  const net = require('node:net');
  const { splitJsonArray } = require('@repo/json-rpc');
  const node = new URL(nodeUrl);
  const idle = [];
  /**
   * Sends one HTTP request to the node on an idle keep-alive connection (or a new one) and gives
   * the answer's body to `answered` (undefined when the node did not answer 200). The node closes idle connections (-rpcservertimeout, which
   * the bench's longer rows pass): a closed one leaves the idle list, and a request it took
   * unanswered is sent once more on a new connection.
   */
  function exchange(path, body, answered, retry = true) {
    const socket = idle.pop() ?? connect();
    socket.request = { path, body, answered, retry };
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${node.host}\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  function connect() {
    const socket = net.connect(Number(node.port), node.hostname);
    bareRequests(socket, (head, body) => {
      const { answered } = socket.request;
      socket.request = undefined;
      idle.push(socket);
      answered(head.startsWith('HTTP/1.1 200 ') ? body.toString('utf8') : undefined);
    });
    socket.on('close', () => {
      const at = idle.indexOf(socket);
      if (at >= 0) idle.splice(at, 1);
      const request = socket.request;
      if (request?.retry) exchange(request.path, request.body, request.answered, false);
    });
    return socket;
  }
  const paths = new Map();
  function send(path) {
    const state = paths.get(path);
    const { out } = state;
    const mayGo = out < IN_FLIGHT || (OVERLAP_CALLS > 0 && state.calls.length >= OVERLAP_CALLS && out < IN_FLIGHT + OVERLAP_BATCHES);
    if (state.calls.length === 0 || !mayGo) return;
    const calls = state.calls;
    state.calls = [];
    state.out++;
    exchange(path, `[${calls.map((c) => c.body).join(',')}]`, (text) => {
      const replies = text === undefined ? undefined : splitJsonArray(text);
      // Not the batch answer of these calls (a 401, a 503, garbage): each gets a 502, so the
      // bench's run fails instead of counting answers that were never the node's.
      if (replies?.length === calls.length) calls.forEach((call, i) => call.answer(200, replies[i]));
      else for (const call of calls) call.answer(502, '{"result":null,"error":{"code":-32603,"message":"bad batch answer"},"id":null}');
      state.out--;
      send(path);
    });
  }
  const server = net.createServer((socket) => {
    bareRequests(socket, (head, body) => {
      const path = head.slice(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
      if (!paths.has(path)) paths.set(path, { calls: [], out: 0 });
      const { calls } = paths.get(path);
      calls.push({
        body: body.toString('utf8'),
        answer: (status, text) =>
          socket.write(
            `HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Bad Gateway'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text) + 1}\r\n\r\n${text}\n`,
          ),
      });
      // After this turn's other requests have been read: they go in the same batch.
      if (calls.length === 1 || calls.length === OVERLAP_CALLS) setImmediate(send, path);
    });
  });
  process.once('SIGTERM', () => process.exit(0));
  await announce(server);
}

/**
 * The proxy's own layers without its per-call work, between the ceiling and the proxy: its front
 * end (src/fast-front.ts) on a node:http server, as the proxy's, and its node client
 * (src/node-client.ts, src/node-http.ts) with the proxy's default settings, each call read whole
 * handed straight to `callBatched` and Core's answer for it written back with the headers the
 * proxy writes (a request id of the same length, made once). No authentication, rate limit,
 * checks, coalescing, cache, metrics or log line: what separates this row from the proxy's is the
 * JSON-RPC handler's per-call work, and from the ceiling's what the front end and the node client
 * cost (docs/performance/rpc-proxy.md, "Twenty-sixth round").
 */
async function layers(nodeUrl, cookieFile) {
  const dist = join(__dirname, '..', 'dist');
  const { createServer } = require('node:http');
  const { installFastFront } = require(join(dist, 'fast-front'));
  const { createCallNodeClient, isJsonRpc } = require(join(dist, 'app'));
  const { loadConfig } = require(join(dist, 'config'));
  const { createLogger } = require('@repo/service');
  // The proxy's own client toward the node, from the proxy's configuration with its defaults, logged in with the node's cookie as the proxy is.
  const config = loadConfig({ BITCOIND_RPC_URL: nodeUrl, BITCOIND_COOKIE_FILE: cookieFile });
  const node = createCallNodeClient(config, createLogger({ name: 'rpc-proxy', level: 'warn' }));
  const requestId = '00000000-0000-4000-8000-000000000000';
  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => res.writeHead(500).end());
  // The bench's calls are JSON-RPC 1.0 (`legacy`: a failed call's status is Core's for its code).
  const installed = installFastFront(server, isJsonRpc, (req, res) =>
    node.callBatched(req.url, req.body, true).then(
      (reply) =>
        res.answer(
          reply.status,
          ['Content-Type', 'application/json', 'X-Request-Id', requestId, 'Content-Length', String(reply.body.length)],
          reply.body,
        ),
      () => res.answer(502, ['Content-Length', '0'], ''),
    ),
  );
  if (installed === undefined) throw new Error('the front end could not be installed on this Node');
  process.once('SIGTERM', () => {
    node.close();
    process.exit(0);
  });
  await announce(server);
}

/**
 * The HTTP exchange alone, as the floor under any server's cost per call: each request's body is
 * read and a fixed JSON-RPC answer (a getblockhash result) written back. `http`: node:http, as the
 * proxy and the forwarder; `net`: a bare socket server that finds the head's end and its
 * Content-Length and nothing else (not a usable HTTP server: what would be left if node:http cost
 * nothing above the sockets).
 */
async function exchange(kind) {
  const answer = Buffer.from('{"result":"0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206","error":null,"id":1}');
  let server;
  if (kind === 'http') {
    server = require('node:http').createServer({ keepAliveTimeout: 30_000 }, (req, res) =>
      readBody(req, () => res.writeHead(200, ['content-type', 'application/json', 'content-length', String(answer.length)]).end(answer)),
    );
  } else if (kind === 'front') {
    // The proxy's front end (src/fast-front.ts) on node:http's server, as the proxy runs it.
    const { installFastFront } = require(join(process.env.BENCH_PROXY_DIST ?? join(__dirname, '..', 'dist'), 'fast-front'));
    server = require('node:http').createServer({ keepAliveTimeout: 30_000 }, (req, res) => res.writeHead(500).end());
    const headers = ['content-type', 'application/json', 'content-length', String(answer.length)];
    const installed = installFastFront(
      server,
      () => true,
      (req, res) => res.answer(200, headers, answer),
    );
    if (installed === undefined) throw new Error('the front end could not be installed on this Node');
  } else {
    const whole = Buffer.concat([
      Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${answer.length}\r\n\r\n`),
      answer,
    ]);
    server = require('node:net').createServer((socket) => bareRequests(socket, () => socket.write(whole)));
  }
  process.once('SIGTERM', () => process.exit(0));
  await announce(server);
}

async function main() {
  if (process.argv[2] === 'exchange') return exchange(process.argv[3]);
  if (process.argv[2] === 'forwarder') return forwarder(process.argv[3], process.argv[4]);
  if (process.argv[2] === 'ceiling') return ceiling(process.argv[3], process.argv[4]);
  if (process.argv[2] === 'layers') return layers(process.argv[3], process.argv[4]);
  if (process.argv[2] === 'double') {
    const { startChainDouble, signSpend } = require('@repo/chain-double');
    const node = await startChainDouble({ user: 'bench', password: 'benchpass' });
    node.fund('p2tr');
    node.fund('p2wpkh');
    const hash = node.chain.active[node.tipHeight() - 1].hash;
    const bigHash = mineFullBlock(node, signSpend);
    // Optional service time of every answer (BENCH_NODE_LATENCY_MS, default 0: the double answers at once).
    node.setLatency(Number(process.env.BENCH_NODE_LATENCY_MS ?? 0));
    const bigBytes = node.chain.getBlock(bigHash).hex.length / 2;
    process.stdout.write(`${JSON.stringify({ url: node.url, hash, bigHash, bigBytes, height: node.tipHeight() })}\n`);
    return;
  }
  // BENCH_PROXY_DIST: another build of the proxy (a copy of dist/), for an A/B in one run; its
  // logger comes from the packages that build finds (node_modules beside that dist/, if any).
  const dist = process.env.BENCH_PROXY_DIST ?? join(__dirname, '..', 'dist');
  const { createLogger } = require('node:module').createRequire(join(dist, 'app.js'))('@repo/service');
  const { createApp } = require(join(dist, 'app'));
  const { loadConfig } = require(join(dist, 'config'));
  // null in the JSON removes a variable (e.g. the user and password, for a node's cookie file).
  const dataDir = mkdtempSync(join(tmpdir(), 'rpc-proxy-bench-'));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    BITCOIND_RPC_URL: process.argv[3],
    BITCOIND_RPC_USER: 'bench',
    BITCOIND_RPC_PASSWORD: 'benchpass',
    RPC_USER: 'client',
    RPC_PASSWORD: 'clientpass',
    // The bench is one client address with up to 50 connections: no rate limit, and a
    // per-address connection cap above that (the default, 32, closes the rest at once).
    RATE_LIMIT_PER_MINUTE: '0',
    MAX_CONNECTIONS_PER_IP: '100',
    ...JSON.parse(process.argv[4] ?? '{}'),
  };
  for (const [k, v] of Object.entries(env)) if (v === null) delete env[k];
  const config = loadConfig(env);
  // Request lines are logged as in production; they go to stdout, which the parent discards.
  const app = createApp(config, { logger: createLogger({ name: 'rpc-proxy', level: config.logLevel }) });
  await app.start();
  // A clean exit on SIGTERM, so a --cpu-prof run writes its profile; the data folder goes with it.
  process.once('SIGTERM', () => {
    void app.close().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
  await announce(app.servers.http);
}

main();
