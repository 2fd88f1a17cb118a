import { GENESIS_HASHES } from '../../chain-params';
import type { ElectrumMethods } from '../protocol';

/** The Electrum protocol version served. */
export const PROTOCOL_VERSION = '1.4';

/** `server.version`, `server.features`, `server.ping` (Electrum protocol 1.4, "Server methods"). */
export const serverMethods: ElectrumMethods = {
  'server.version': async (ctx) => Promise.resolve([ctx.settings.serverName, PROTOCOL_VERSION]),
  'server.features': async (ctx) =>
    Promise.resolve({
      genesis_hash: GENESIS_HASHES[ctx.settings.network],
      hosts: {},
      protocol_min: PROTOCOL_VERSION,
      protocol_max: PROTOCOL_VERSION,
      server_version: ctx.settings.serverName,
      hash_function: 'sha256',
      pruning: null,
      // The silent-payment protocol versions served (Frigate's README: BIP-352 is version 0).
      silent_payments: [0],
    }),
  'server.ping': async () => Promise.resolve(null),
};
