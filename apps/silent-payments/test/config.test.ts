import { ConfigError } from '@repo/config';
import { loadConfig } from '../src/config';

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    const config = loadConfig({});
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(8000);
    expect(config.network).toBe('signet');
    expect(config.chainRpc.url).toBe('http://127.0.0.1:18443');
    expect(config.startHeight).toBeUndefined();
    expect(config.limits).toMatchObject({
      ratePerMinute: 100,
      maxBodyBytes: 64 * 1024,
      maxConcurrentBodies: 16,
      maxConnections: 50,
      maxConnectionsPerIp: 20,
      headersTimeoutMs: 10_000,
    });
    expect(config.relay.url).toBeUndefined();
    expect(config.scanner).toMatchObject({
      pollIntervalMs: 5_000,
      longPoll: true,
      longPollTimeoutMs: 10_000,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '8100',
      SP_NETWORK: 'regtest',
      SP_SCAN_KEY: 'aa'.repeat(32),
      SP_SPEND_PUBKEY: `02${'bb'.repeat(32)}`,
      SP_START_HEIGHT: '120',
      CHAIN_RPC_URL: 'http://node:38332',
      CHAIN_RPC_USER: 'u',
      CHAIN_RPC_PASSWORD: 'p',
      RELAY_URL: 'ws://relay:8090',
      RELAY_PUBLISH_TOKEN: 'token',
      SCAN_MEMPOOL_INTERVAL_MS: '100',
    });
    expect(config).toMatchObject({ host: '0.0.0.0', port: 8100, network: 'regtest', startHeight: 120, scanKeyHex: 'aa'.repeat(32) });
    expect(config.chainRpc).toMatchObject({ url: 'http://node:38332', user: 'u', password: 'p', cookieFile: undefined });
    expect(config.relay).toMatchObject({ url: 'ws://relay:8090', publishToken: 'token' });
    expect(config.scanner).toMatchObject({ mempoolIntervalMs: 100 });
  });

  it.each([
    [{ SP_NETWORK: 'liquid' }, 'SP_NETWORK'],
    [{ SP_SCAN_KEY: 'zz' }, 'SP_SCAN_KEY'],
    [{ SP_SCAN_KEY: 'aa'.repeat(32) }, 'SP_SCAN_KEY and SP_SPEND_PUBKEY'],
    [{ SP_SCAN_KEY: 'aa'.repeat(32), SP_SPEND_PUBKEY: `04${'bb'.repeat(32)}` }, 'SP_SPEND_PUBKEY'],
    [{ SP_START_HEIGHT: '-1' }, 'SP_START_HEIGHT'],
    [{ CHAIN_RPC_URL: 'ftp://x' }, 'CHAIN_RPC_URL'],
    [{ CHAIN_RPC_USER: 'u' }, 'CHAIN_RPC_USER'],
    [{ RELAY_URL: 'http://relay' }, 'RELAY_URL'],
    [{ PORT: '70000' }, 'PORT'],
    [{ SP_SECP256K1_BACKEND: 'gpu' }, 'SP_SECP256K1_BACKEND'],
    [{ SCAN_MEMPOOL_INTERVAL_MS: '0' }, 'SCAN_MEMPOOL_INTERVAL_MS'],
  ])('refuses %j naming the variable', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });
});
