import WebSocket from 'ws';
import { eventually } from './processes';

/** A relay event as a WebSocket client receives it (docs/relay.md, "WebSocket envelope"). */
export interface RelayEvent {
  type: string;
  id: string;
  timestamp: number;
  data: Record<string, unknown>;
}

/** A WebSocket client of a relay, subscribed, with every message it received so far. */
export interface RelaySubscriber {
  readonly received: RelayEvent[];
  /** Waits until the payment's TransactionReceived and its block's BlockScanned have arrived; returns every copy of each. */
  paymentEvents(txid: string, blockHash: string, what: string): Promise<{ tx: RelayEvent[]; block: RelayEvent[] }>;
  close(): void;
}

/** Connects to `url` (with `headers`, e.g. a client token), subscribes to `types` and waits for the `subscribed` answer. */
export async function subscribeToRelay(url: string, types: string[], headers: Record<string, string> = {}): Promise<RelaySubscriber> {
  const received: RelayEvent[] = [];
  const socket = new WebSocket(url, { headers });
  socket.on('message', (raw) => received.push(JSON.parse((raw as Buffer).toString('utf8')) as RelayEvent));
  await new Promise((done, fail) => socket.once('open', done).once('error', fail));
  socket.send(JSON.stringify({ type: 'subscribe', id: 'sub-1', timestamp: Date.now(), data: { types } }));
  await eventually(async () => received.find((m) => m.type === 'subscribed' && m.id === 'sub-1'), 5_000, 'subscribed');
  return {
    received,
    paymentEvents: (txid, blockHash, what) =>
      eventually(
        async () => {
          const tx = received.filter((m) => m.type === 'TransactionReceived' && m.data.txid === txid);
          const block = received.filter((m) => m.type === 'BlockScanned' && m.data.block_hash === blockHash);
          return tx.length > 0 && block.length > 0 ? { tx, block } : undefined;
        },
        30_000,
        what,
      ),
    close: () => socket.close(),
  };
}
