import { ConfigError } from '@repo/config';
import { loadConfig } from '../src/config';
import { createSeenIds } from '../src/seen-ids';

describe('loadConfig', () => {
  it('uses the spec defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ host: '127.0.0.1', wsPort: 8090, httpPort: 8091, peers: [], relayId: undefined, authToken: undefined });
    expect(config.limits).toMatchObject({
      maxWsConnections: 1000,
      maxMessageBytes: 1048576,
      rateLimitPerMinute: 200,
      maxBodyBytes: 5242880,
      maxHttpConnections: 100,
    });
    expect(config.timing.heartbeatIntervalMs).toBe(30_000);
  });

  it('reads peers and normalises pinned fingerprints', () => {
    const config = loadConfig({ RELAY_PEERS: 'ws://a:8090, wss://b:8090', RELAY_PEER_FINGERPRINT: 'ab'.repeat(32) });
    expect(config.peers).toEqual(['ws://a:8090', 'wss://b:8090']);
    expect(config.peerFingerprints).toEqual([Array(32).fill('AB').join(':')]);
  });

  it.each([
    ['RELAY_PEERS', 'http://a:8090'],
    ['RELAY_PEERS', 'not a url'],
    ['RELAY_ID', 'has spaces'],
    ['WS_PORT', '70000'],
    ['RELAY_AUTH_TOKEN', 'short'],
    ['RELAY_PEER_FINGERPRINT', 'abcd'],
    ['MAX_WS_CONNECTIONS', '0'],
    ['TLS_CERT_FILE', '/tmp/cert.pem'],
  ])('throws a ConfigError naming %s when it is %j', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });
});

describe('createSeenIds', () => {
  it('reports an id once, forgets it after the ttl and keeps at most maxIds', () => {
    let t = 0;
    const seen = createSeenIds({ maxIds: 3, ttlMs: 100, now: () => t });
    expect(seen.add('a')).toBe(true);
    expect(seen.add('a')).toBe(false);
    seen.add('b');
    seen.add('c');
    seen.add('d');
    expect(seen.size).toBe(3);
    expect(seen.has('a')).toBe(false);
    expect(seen.has('d')).toBe(true);
    t = 150;
    expect(seen.add('d')).toBe(true);
    expect(seen.size).toBe(1);
  });
});
