// The config server for bench/watch.mjs, in its own process so that its memory is its own:
// a 4 KB file with substitution, limits raised for 1,000 clients from one address (the
// connection caps too: MAX_CONNECTIONS, default 500, and MAX_CONNECTIONS_PER_IP). Run with
// --expose-gc. Sends {port, file} over IPC, then answers 'mem' with its memory after a full
// collection and the watch hub's counts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger, generateSelfSignedCertificate, listen } from '@repo/service';
import { hexToBytes } from '@repo/crypto';
import { createApp, createKeyring, loadConfig } from '../dist/index.js';

const clients = Number(process.argv[2] ?? 1000);
const root = mkdtempSync(join(tmpdir(), 'config-watch-bench-'));
const dir = join(root, 'storage', 'bench');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, '.env'), 'HOST=db.internal\nPORT=5432\nUSER=app\nURL=postgres://$USER@$HOST:$PORT/app\n');
const line = 'database_url=${URL} host=${HOST} port=${PORT} user=${USER} padding=xxxxxxxxxxxxxxxxxxxxxxxx\n';
let text = '';
while (text.length < 4096) text += line;
const file = join(dir, 'app.conf');
writeFileSync(file, text.slice(0, 4096));
const master = '33'.repeat(32);
const config = loadConfig({
  PORT: '0',
  DATA_DIR: join(root, 'data'),
  STORAGE_DIR: join(root, 'storage'),
  CONFIG_MASTER_KEY: master,
  RATE_LIMIT_PER_MINUTE: '0',
  RATE_LIMIT_PER_SECOND: '0',
  MAX_CONNECTIONS: String(clients * 2), // a tenth of it is kept for other addresses
  MAX_CONNECTIONS_PER_IP: String(clients + 100),
  MAX_IN_FLIGHT: String(clients * 2),
  MAX_WAITING: String(clients * 2),
});
const tls = await generateSelfSignedCertificate(['localhost', '127.0.0.1']);
const keyring = createKeyring({ keysDir: config.keysDir, masterKey: hexToBytes(master) });
const service = createApp(config, { logger: createSilentLogger(), keyring, tls });
await service.start();
service.servers.https.keepAliveTimeout = 60_000; // the benchmark reuses its connections between phases
const { port } = await listen(service.servers.https, 0, '127.0.0.1');
process.send({ port, file, ca: tls.cert });
process.on('message', (message) => {
  if (message === 'mem') {
    globalThis.gc();
    globalThis.gc();
    const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
    process.send({ rss, heapUsed, external, arrayBuffers, ...service.watch.stats });
  } else if (message === 'stop') {
    service.close().then(() => {
      rmSync(root, { recursive: true, force: true });
      process.exit(0);
    });
  }
});
