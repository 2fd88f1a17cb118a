import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { variablesRead } from '@repo/config/testing';
import { ROOT } from './support/processes';

/** The parts of a compose service this test reads. */
interface ComposeService {
  image?: string;
  build?: { context: string; target: string };
  command?: string[];
  environment?: Record<string, string>;
  user?: string;
  ports?: string[];
  expose?: string[];
  volumes?: string[];
  restart?: string;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}

// Compose applies YAML merge keys (`<<: *app`), so the parser must too.
const composeText = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const compose = parse(composeText, { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

/** Published ports bind the address PUBLISH_ADDRESS names, loopback unless the operator says otherwise. */
const PUBLISH_ON = '${PUBLISH_ADDRESS:-127.0.0.1}:';

/** Each app service, its folder, and the ports its configuration binds. */
const APPS: { service: string; app: string; ports: (config: Record<string, unknown>) => number[] }[] = [
  {
    service: 'config-server',
    app: 'config-server',
    ports: (c) => [c.port as number, ...(c.httpsAltPort === undefined ? [] : [c.httpsAltPort as number])],
  },
  { service: 'rpc-proxy', app: 'rpc-proxy', ports: (c) => [c.port as number] },
  { service: 'silent-payments', app: 'silent-payments', ports: (c) => [c.port as number] },
  { service: 'relay', app: 'relay', ports: (c) => [c.wsPort as number, c.httpPort as number] },
  { service: 'storage', app: 'storage', ports: (c) => [c.port as number] },
];

/** The environment as the container sees it: `${VAR:?…}` and `${VAR:-default}` filled in. */
function containerEnv(service: ComposeService): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(service.environment ?? {})) {
    env[name] = String(value).replace(/\$\{([A-Z_]+)(:[?-])?([^}]*)\}/g, (_m, _v, op, rest) => (op === ':-' ? rest : 'ab'.repeat(32)));
  }
  return env;
}

type LoadConfig = (env: Readonly<Record<string, string | undefined>>) => Record<string, unknown>;

function loadConfigOf(app: string): LoadConfig {
  return (require(join(ROOT, 'apps', app, 'dist', 'index.js')) as { loadConfig: LoadConfig }).loadConfig;
}

describe('docker-compose.yml', () => {
  it('runs the five apps, the node and the storage proxy', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'bitcoind',
      'config-server',
      'relay',
      'rpc-proxy',
      'silent-payments',
      'storage',
      'storage-gateway',
    ]);
  });

  describe.each(APPS)('$service', ({ service: name, app, ports }) => {
    const service = compose.services[name]!;
    const env = containerEnv(service);

    it("runs the app's built entry point from its own image target", () => {
      expect(service.build).toEqual({ context: '.', target: app });
      expect(dockerfile).toMatch(new RegExp(`^FROM runtime AS ${app}\\n`, 'm'));
      expect(dockerfile).toContain(`COPY --from=build /out/${app} /app`);
      expect(service.command).toEqual(['node', 'dist/main.js']);
      expect(existsSync(join(ROOT, 'apps', app, service.command![1]!))).toBe(true);
    });

    it('sets only variables the app reads, with values its configuration accepts', () => {
      // What the app's loadConfig looks up, the shared readers (LOG_LEVEL, TRUST_PROXY, limits) included.
      const read = variablesRead(loadConfigOf(app));
      for (const variable of Object.keys(env)) expect({ variable, read: read.has(variable) }).toEqual({ variable, read: true });
      expect(() => loadConfigOf(app)(env)).not.toThrow();
      expect(env.HOST).toBe('0.0.0.0');
    });

    it('publishes or exposes exactly the ports the app binds', () => {
      const bound = ports(loadConfigOf(app)(env)).sort();
      const published = (service.ports ?? []).map((p) => Number(p.split(':').pop()));
      for (const port of service.ports ?? []) expect(port.startsWith(PUBLISH_ON)).toBe(true);
      const exposed = (service.expose ?? []).map(Number);
      expect([...published, ...exposed].sort()).toEqual(bound);
    });

    it('keeps its state in a named volume mounted at DATA_DIR', () => {
      const mounts = (service.volumes ?? []).map((v) => v.split(':'));
      const data = mounts.find(([, target]) => target === env.DATA_DIR);
      expect(data).toBeDefined();
      expect(Object.keys(compose.volumes)).toContain(data![0]);
    });

    it('has a health check and a restart policy', () => {
      expect(service.healthcheck?.test.length).toBeGreaterThan(1);
      expect(service.restart).toBe('unless-stopped');
    });
  });

  it('reaches the node only inside the compose network, with its cookie read-only', () => {
    const node = compose.services.bitcoind!;
    // The node image's entrypoint makes its data directory private to its uid: the proxy (user
    // node, uid 1000, in the app images) can read the cookie only when bitcoind runs as that uid.
    expect(dockerfile).toMatch(/^FROM runtime AS rpc-proxy$/m);
    expect(dockerfile).toMatch(/AS runtime\n(?:.*\n)*USER node\n/);
    expect(node.environment).toEqual(expect.objectContaining({ UID: '1000', GID: '1000' }));
    expect(node.image).toMatch(/^bitcoin\/bitcoin:\d+\.\d+/);
    expect(node.ports).toBeUndefined();
    const rpcPort = node.command!.find((a) => a.startsWith('-rpcport='))!.split('=')[1];
    expect(node.expose).toEqual([rpcPort]);
    expect(node.command).toContain('-signet');
    const proxy = compose.services['rpc-proxy']!;
    expect(proxy.environment!.BITCOIND_RPC_URL).toBe(`http://bitcoind:${rpcPort}`);
    const nodeVolume = node.volumes![0]!.split(':')[0];
    expect(proxy.volumes).toContain(`${nodeVolume}:/bitcoind:ro`);
    expect(proxy.environment!.BITCOIND_COOKIE_FILE).toBe('/bitcoind/signet/.cookie');
  });

  it('points the scanner at the proxy with the cookie the proxy writes, and at the relay', () => {
    const sp = compose.services['silent-payments']!.environment!;
    const proxy = compose.services['rpc-proxy']!;
    expect(sp.CHAIN_RPC_URL).toBe(`http://rpc-proxy:${proxy.environment!.PORT}`);
    const proxyData = proxy.volumes!.find((v) => v.endsWith(':/data'))!.split(':')[0];
    expect(compose.services['silent-payments']!.volumes).toContain(`${proxyData}:/rpc-proxy:ro`);
    expect(sp.CHAIN_RPC_COOKIE_FILE).toBe('/rpc-proxy/.cookie'); // the proxy writes DATA_DIR/.cookie
    expect(sp.RELAY_URL).toBe(`ws://relay:${compose.services.relay!.environment!.WS_PORT}`);
    expect(sp.RELAY_PUBLISH_TOKEN).toBe(compose.services.relay!.environment!.RELAY_PUBLISH_TOKEN);
  });

  it('serves the storage service under /storage/ through the reverse proxy', () => {
    const proxy = compose.services['storage-gateway']!;
    const conf = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
    expect(proxy.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
    // Resolved at request time (through Docker's DNS) so that a recreated container is found again.
    expect(conf).toContain('resolver 127.0.0.11');
    expect(conf).toContain(`set $storage_upstream http://storage:${compose.services.storage!.environment!.PORT};`);
    expect(conf).toMatch(/location \/storage\/ \{\s*proxy_pass \$storage_upstream;/);
    const listen = /listen (\d+);/.exec(conf)![1];
    expect(proxy.ports).toEqual([`${PUBLISH_ON}8081:${listen}`]);
  });

  it('lists every variable it passes through in .env.example', () => {
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    const listed = new Set([...example.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    const used = new Set([...composeText.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]));
    expect([...used].filter((name) => !listed.has(name))).toEqual([]);
    expect([...listed].filter((name) => !used.has(name))).toEqual([]);
  });

  it("keeps the operator's .env out of the images and out of git", () => {
    const dockerignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    const gitignore = readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n');
    expect(dockerignore).toContain('.env');
    expect(gitignore).toContain('.env');
    expect(gitignore).toContain('!.env.example');
  });

  it('declares every named volume it mounts', () => {
    for (const service of Object.values(compose.services)) {
      for (const volume of service.volumes ?? []) {
        // A bind mount's folder may come from the settings with a default: `${TLS_DIR:-./deploy/tls}`.
        const source = volume.replace(/^\$\{\w+:-([^}]*)\}/, '$1').split(':')[0]!;
        if (!source.startsWith('.')) expect(Object.keys(compose.volumes)).toContain(source);
      }
    }
  });
});
