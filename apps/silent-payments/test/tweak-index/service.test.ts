import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { ConfigError } from '@repo/config';
import { createSilentLogger, generateSelfSignedCertificate } from '@repo/service';
import { createIndexInfoRouter } from '../../src/routes/index-info';
import { INDEX_DATABASE_FILE, loadTweakIndexConfig } from '../../src/tweak-index/config';
import { createTweakIndexService, type TweakIndexService } from '../../src/tweak-index/service';
import { connectElectrum } from './support/electrum-client';
import { connectOracle } from './support/oracle-client';
import { record } from './support/records';

describe('the tweak index configuration', () => {
  it('defaults: off, BlindBit and electrs ports, SQLite under DATA_DIR, no TLS', () => {
    expect(loadTweakIndexConfig({}, '/data')).toEqual({
      enabled: false,
      startHeight: undefined,
      grpcPort: 7001,
      electrumPort: 60601,
      electrumTlsPort: undefined,
      tlsCertFile: undefined,
      tlsKeyFile: undefined,
      databaseUrl: undefined,
      sqliteFile: join('/data', INDEX_DATABASE_FILE),
      remoteScanWorkers: availableParallelism(),
    });
  });

  it('reads every variable, and names the one at fault', () => {
    const config = loadTweakIndexConfig(
      {
        INDEX_ENABLED: 'true',
        SP_INDEX_START_HEIGHT: '200000',
        INDEX_GRPC_PORT: '7002',
        ELECTRUM_PORT: '50001',
        TLS_CERT_FILE: '/c.pem',
        TLS_KEY_FILE: '/k.pem',
        DATABASE_URL: 'postgres://u@db/index',
        REMOTE_SCAN_WORKERS: '3',
      },
      '/data',
    );
    expect(config).toMatchObject({
      enabled: true,
      startHeight: 200_000,
      grpcPort: 7002,
      electrumPort: 50001,
      electrumTlsPort: 60602,
      databaseUrl: 'postgres://u@db/index',
      remoteScanWorkers: 3,
    });
    expect(() => loadTweakIndexConfig({ REMOTE_SCAN_WORKERS: '0' }, '/d')).toThrow(/REMOTE_SCAN_WORKERS/);
    expect(() => loadTweakIndexConfig({ DATABASE_URL: 'mysql://x' }, '/d')).toThrow(ConfigError);
    expect(() => loadTweakIndexConfig({ ELECTRUM_TLS_PORT: '60602' }, '/d')).toThrow(
      'ELECTRUM_TLS_PORT needs TLS_CERT_FILE and TLS_KEY_FILE',
    );
    expect(() => loadTweakIndexConfig({ SP_INDEX_START_HEIGHT: '-1' }, '/d')).toThrow(/SP_INDEX_START_HEIGHT/);
  });
});

describe('the tweak index service: the store, the indexer, gRPC, Electrum (TCP and TLS) and GET /info', () => {
  let dir: string;
  let service: TweakIndexService;
  let http: Server;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sp-index-service-'));
    const certificate = await generateSelfSignedCertificate(['localhost']);
    writeFileSync(join(dir, 'cert.pem'), certificate.cert);
    writeFileSync(join(dir, 'key.pem'), certificate.key);
    const config = {
      ...loadTweakIndexConfig({ TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'key.pem') }, dir),
      grpcPort: 0,
      electrumPort: 0,
      electrumTlsPort: 0,
    };
    service = createTweakIndexService(config, {
      network: 'mainnet',
      scannerStartHeight: 5,
      version: '1.0.0',
      logger: createSilentLogger(),
    });
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts on its ports, serves what is indexed on each protocol, and closes', async () => {
    const ports = await service.start('127.0.0.1');
    await service.indexer.store.applyBlock(record(5));
    const electrum = await connectElectrum(ports.electrumPort);
    const [name] = await electrum.call<[string]>('server.version');
    expect(name).toBe('silent-payments-electrs 1.0.0');
    electrum.close();
    const overTls = await connectElectrum(ports.electrumTlsPort!, { ca: readFileSync(join(dir, 'cert.pem'), 'utf8') });
    expect(await overTls.call('blockchain.tweaks.subscribe', [5, 1, true])).toHaveProperty('5');
    overTls.close();
    const oracle = connectOracle(ports.grpcPort);
    expect(await oracle.call('GetInfo')).toMatchObject({ network: 'main', height: 5 });
    oracle.close();

    const app = express();
    app.use(createIndexInfoRouter({ store: service.indexer.store, network: 'mainnet' }));
    http = createServer(app);
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const info = await fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/info`);
    expect(await info.json()).toEqual({
      network: 'main',
      height: 5,
      tweaks_only: false,
      tweaks_full_basic: true,
      tweaks_full_with_dust_filter: true,
      tweaks_cut_through_with_dust_filter: false,
    });
  });
});
