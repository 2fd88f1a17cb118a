import { Agent as HttpAgent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { closeGracefully, generateSelfSignedCertificate, listen } from '../src';

/** What a keep-alive client saw: each answer's status and Connection header, or the error of the call. */
type Outcome = { status: number; connection: string | undefined } | { error: string };

/** Sends one request on `agent`'s connection. */
type Send = (path: string, agent: HttpAgent) => Promise<Outcome>;

/** Called when the next request reaches the handler (set by the test that waits for it). */
let onArrival: (() => void) | undefined;

const handler = (req: IncomingMessage, res: ServerResponse) => {
  onArrival?.();
  onArrival = undefined;
  // Each answer takes a little while: a close that begins on arrival finds the connection busy.
  setTimeout(() => res.end(`answer to ${req.url}`), 15);
};

/**
 * A client that sends one request after the other on one keep-alive connection until told to
 * stop or until a call fails (the server no longer listens).
 */
function keepSending(send: Send, agent: HttpAgent) {
  const outcomes: Outcome[] = [];
  let stop = false;
  const done = (async () => {
    for (let i = 0; !stop && i < 10_000; i++) {
      const outcome = await send(`/${i}`, agent);
      outcomes.push(outcome);
      if ('error' in outcome) return;
    }
  })();
  return {
    outcomes,
    stop: async () => {
      stop = true;
      await done;
    },
  };
}

function sendWith(call: typeof request | typeof httpsRequest, port: number, extra: object = {}): Send {
  return (path: string, agent: HttpAgent) =>
    new Promise<Outcome>((resolve) => {
      const req = call({ host: '127.0.0.1', port, path, agent, ...extra }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
        res.on('error', (err) => resolve({ error: err.message }));
      });
      req.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
      req.end();
    });
}

async function untilAnswers(outcomes: Outcome[], n: number): Promise<void> {
  while (outcomes.length < n) await new Promise((r) => setTimeout(r, 5));
}

/** Every call was answered in full with 200 until the server stopped listening; after that, refused. */
function expectNothingCut(outcomes: Outcome[]): void {
  const answered = outcomes.filter((o): o is { status: number; connection: string | undefined } => 'status' in o);
  expect(answered.every((o) => o.status === 200)).toBe(true);
  const errors = outcomes.filter((o): o is { error: string } => 'error' in o).map((o) => o.error);
  expect(errors.filter((e) => e !== 'ECONNREFUSED')).toEqual([]);
  // The connection ended with an answer that said so, not by a reset under a request.
  expect(answered[answered.length - 1]?.connection).toBe('close');
}

describe('closeGracefully with a keep-alive client that keeps sending', () => {
  const grace = 60_000; // far beyond the test's timeout: the close must not wait for it

  /** Closes `server` while a keep-alive client sends on one connection; what the client got. */
  async function closeUnderTraffic(server: Server, send: Send, agent: HttpAgent): Promise<Outcome[]> {
    const client = keepSending(send, agent);
    await untilAnswers(client.outcomes, 3);
    // The close begins while a request is being handled: the connection is busy, not idle. (Closing
    // an idle keep-alive connection races with a request the client may be sending on it at that
    // moment, which the client sees reset: RFC 9112, section 9.3.1, has clients retry it.)
    await new Promise<void>((resolve) => (onArrival = resolve));
    await closeGracefully(server, grace);
    await client.stop();
    agent.destroy();
    return client.outcomes;
  }

  it('ends the busy connection after its answer (a server started by listen)', async () => {
    const server: Server = createServer(handler);
    const { port } = await listen(server, 0, '127.0.0.1');
    expectNothingCut(await closeUnderTraffic(server, sendWith(request, port), new HttpAgent({ keepAlive: true, maxSockets: 1 })));
  });

  it('does the same for a server it did not start (idle connections closed as they turn idle)', async () => {
    const server: Server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const outcomes = await closeUnderTraffic(server, sendWith(request, port), new HttpAgent({ keepAlive: true, maxSockets: 1 }));
    const answered = outcomes.filter((o) => 'status' in o) as { status: number }[];
    expect(answered.every((o) => o.status === 200)).toBe(true);
    expect(outcomes.filter((o) => 'error' in o).every((o) => ['ECONNREFUSED', 'ECONNRESET'].includes(o.error))).toBe(true);
  });

  it('ends the busy TLS connection after its answer (HTTPS)', async () => {
    const tls = await generateSelfSignedCertificate(['localhost', '127.0.0.1']);
    const server = createHttpsServer({ cert: tls.cert, key: tls.key }, handler);
    const { port } = await listen(server, 0, '127.0.0.1');
    const agent = new HttpsAgent({ keepAlive: true, maxSockets: 1, ca: tls.cert, servername: 'localhost' });
    expectNothingCut(await closeUnderTraffic(server, sendWith(httpsRequest, port), agent));
  });
});
