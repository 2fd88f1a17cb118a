import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger, listen } from '@repo/service';
import { createApp as createProxy, loadConfig as loadProxyConfig, type ProxyApp } from '@repo/rpc-proxy';
import { createFundedWallet, startRegtestNode, type RegtestNode, type RegtestWallet } from '@repo/regtest';
import { startFakeRelay, type FakeRelay } from './fake-relay';

const TOKEN = 'relay-publish-token';

/**
 * What the real-node suites run the service against: a regtest Bitcoin Core with a funded wallet,
 * the rpc-proxy in front of it (the service's way to the node), a fake relay, and a data directory.
 */
export interface RealNodeStack {
  node: RegtestNode;
  wallet: RegtestWallet;
  proxy: ProxyApp;
  proxyUrl: string;
  relay: FakeRelay;
  /** The service's DATA_DIR (empty at first). */
  dir: string;
  /** The service's environment toward the proxy and the relay, with `extra` on top. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Stops the proxy, the relay and the node; removes the directories. */
  close(): Promise<void>;
}

/** Options of {@link startRealNodeStack}. */
export interface RealNodeStackOptions {
  /** Prefix of the temporary directories. */
  name: string;
  /** The proxy's client credentials the service uses (RPC_USER/RPC_PASSWORD). */
  proxyUser: string;
  proxyPassword: string;
  /** Extra bitcoind arguments. */
  nodeArgs?: string[];
}

/** Starts the node, its wallet, the proxy (listening on port 0) and the fake relay. */
export async function startRealNodeStack(options: RealNodeStackOptions): Promise<RealNodeStack> {
  const node = await startRegtestNode(options.nodeArgs === undefined ? {} : { args: options.nodeArgs });
  const proxyDir = mkdtempSync(join(tmpdir(), `${options.name}-proxy-`));
  const dir = mkdtempSync(join(tmpdir(), `${options.name}-`));
  let proxy: ProxyApp | undefined;
  let relay: FakeRelay | undefined;
  const close = async () => {
    await relay?.close();
    await proxy?.close();
    await node.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(proxyDir, { recursive: true, force: true });
  };
  try {
    const wallet = await createFundedWallet(node);
    proxy = createProxy(
      loadProxyConfig({
        DATA_DIR: proxyDir,
        BITCOIND_RPC_URL: node.url,
        BITCOIND_COOKIE_FILE: node.cookieFile,
        RPC_USER: options.proxyUser,
        RPC_PASSWORD: options.proxyPassword,
      }),
      { logger: createSilentLogger() },
    );
    await proxy.start();
    const proxyUrl = `http://127.0.0.1:${(await listen(proxy.servers.http, 0, '127.0.0.1')).port}`;
    relay = await startFakeRelay(TOKEN);
    const relayUrl = relay.url;
    return {
      node,
      wallet,
      proxy,
      proxyUrl,
      relay,
      dir,
      env: (extra = {}) => ({
        DATA_DIR: dir,
        CHAIN_RPC_URL: proxyUrl,
        CHAIN_RPC_USER: options.proxyUser,
        CHAIN_RPC_PASSWORD: options.proxyPassword,
        RELAY_URL: relayUrl,
        RELAY_PUBLISH_TOKEN: TOKEN,
        ...extra,
      }),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Polls the asynchronous `check` every 25 ms until it holds, failing after `ms`. */
export async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
