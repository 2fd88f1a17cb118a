// One benchmark target in its own process (so the load generator does not share its event loop):
//   node bench/server.mjs file [CLIENT_KEYS_DIR]  the config server, a 4 KB file with substitution,
//                                                 limits off, client keys registered from that folder
//   node bench/server.mjs hello                   an express "hello" endpoint over the same TLS
//   node bench/server.mjs sized LENGTH            the same, answering a fixed body of LENGTH bytes
//                                                 (the file endpoint's answer's length)
// Prints the port on stdout, then serves until killed.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { createSilentLogger, generateSelfSignedCertificate, listen } from '@repo/service';
import { hexToBytes } from '@repo/crypto';
import { createApp, createKeyring, loadConfig } from '../dist/index.js';

const mode = process.argv[2];
const tls = await generateSelfSignedCertificate(['localhost', '127.0.0.1']);
let server;
/** The config server's folder (storage and data), removed on SIGTERM. */
let root;
if (mode === 'hello' || mode === 'sized') {
  const app = express();
  const text = mode === 'hello' ? 'hello' : 'x'.repeat(Number(process.argv[3]));
  app.get('/hello', (_req, res) => {
    res.send(text);
  });
  server = createServer({ cert: tls.cert, key: tls.key }, app);
} else {
  root = mkdtempSync(join(tmpdir(), 'config-bench-'));
  mkdirSync(join(root, 'storage', 'bench'), { recursive: true });
  writeFileSync(join(root, 'storage', 'bench', '.env'), 'HOST=db.internal\nPORT=5432\nUSER=app\nURL=postgres://$USER@$HOST:$PORT/app\n');
  const line = 'database_url=${URL} host=${HOST} port=${PORT} user=${USER} padding=xxxxxxxxxxxxxxxxxxxxxxxx\n';
  let text = '';
  while (text.length < 4096) text += line;
  writeFileSync(join(root, 'storage', 'bench', 'app.conf'), text.slice(0, 4096));
  const master = '33'.repeat(32);
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: join(root, 'data'),
    STORAGE_DIR: join(root, 'storage'),
    CONFIG_MASTER_KEY: master,
    RATE_LIMIT_PER_MINUTE: '0',
    RATE_LIMIT_PER_SECOND: '0',
    MAX_CONNECTIONS_PER_IP: '1000',
    MAX_IN_FLIGHT: '10000',
    ...(process.argv[3] ? { CLIENT_KEYS_DIR: process.argv[3], CLIENT_KEYS_RECHECK_MS: '1000' } : {}),
  });
  const keyring = createKeyring({ keysDir: config.keysDir, masterKey: hexToBytes(master) });
  const service = createApp(config, { logger: createSilentLogger(), keyring, tls });
  await service.start();
  server = service.servers.https;
}
const { port } = await listen(server, 0, '127.0.0.1');
process.stdout.write(`${port}\n`);
process.on('SIGTERM', () => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  process.exit(0);
});
