'use strict';
// Child process of bench.mjs: starts the chain double (argv[2] === 'double') or the proxy
// (argv[2] === 'proxy', node URL in argv[3], then the proxy's environment on top of the
// process's) and prints one JSON line with what it listens on.
const { mkdtempSync } = require('node:fs');
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

async function main() {
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
  const { createLogger, listen } = require('@repo/service');
  // BENCH_PROXY_DIST: another build of the proxy (a copy of dist/), for an A/B in one run.
  const dist = process.env.BENCH_PROXY_DIST ?? join(__dirname, '..', 'dist');
  const { createApp } = require(join(dist, 'app'));
  const { loadConfig } = require(join(dist, 'config'));
  // null in the JSON removes a variable (e.g. the user and password, for a node's cookie file).
  const env = {
    ...process.env,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'rpc-proxy-bench-')),
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
  // A clean exit on SIGTERM, so a --cpu-prof run writes its profile.
  process.once('SIGTERM', () => void app.close().finally(() => process.exit(0)));
  const address = await listen(app.servers.http, 0, '127.0.0.1');
  process.stderr.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
}

main();
