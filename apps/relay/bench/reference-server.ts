/**
 * The benchmark's reference: a bare `ws` broadcast server with no validation, no
 * de-duplication and no accounting. Every text message received is sent to every other client;
 * with UPSTREAM set it also connects to that server and rebroadcasts what it receives (a chain).
 * Prints `listening <port>` once ready.
 */
import { WebSocket, WebSocketServer } from 'ws';

const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, maxPayload: 1024 * 1024 });

function broadcast(data: Buffer, except?: WebSocket): void {
  for (const client of wss.clients) {
    if (client !== except && client.readyState === WebSocket.OPEN) client.send(data, { binary: false });
  }
}

wss.on('connection', (ws) => {
  ws.on('message', (data) => broadcast(data as Buffer, ws));
  ws.on('error', () => undefined);
});

wss.on('listening', () => {
  const upstream = process.env.UPSTREAM;
  const announce = () => process.stdout.write(`listening ${(wss.address() as { port: number }).port}\n`);
  if (upstream === undefined) {
    announce();
    return;
  }
  const up = new WebSocket(upstream, { perMessageDeflate: false });
  up.on('message', (data) => broadcast(data as Buffer));
  up.on('open', announce);
  up.on('error', (err) => {
    process.stderr.write(`upstream: ${err.message}\n`);
    process.exit(1);
  });
});

process.on('SIGTERM', () => process.exit(0));
