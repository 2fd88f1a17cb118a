'use strict';
// Child process of bench.mjs and real-node.mjs: starts the chain double (argv[2] === 'double'),
// the proxy (argv[2] === 'proxy', node URL in argv[3], then the proxy's environment on top of the
// process's) or the bare forwarder (argv[2] === 'forwarder', node URL and its Authorization
// header in argv[3] and argv[4]), and prints one JSON line with what it listens on.
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

async function main() {
  if (process.argv[2] === 'forwarder') return forwarder(process.argv[3], process.argv[4]);
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
    // The bench is one client address making tens of thousands of calls a minute: no rate limit.
    RATE_LIMIT_PER_MINUTE: '0',
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
