import { connect, type TLSSocket } from 'node:tls';

/** What a TLS client offering `options` gets from the server on `port`: whether the handshake succeeded, and on what. */
export function tlsHandshake(
  port: number,
  options: { ciphers?: string; maxVersion?: 'TLSv1.2' | 'TLSv1.3' },
): Promise<{ ok: boolean; cipher?: string; protocol?: string | null }> {
  return new Promise((resolve) => {
    const socket: TLSSocket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options }, () => {
      const cipher = socket.getCipher().name;
      const protocol = socket.getProtocol();
      socket.destroy();
      resolve({ ok: true, cipher, protocol });
    });
    socket.once('error', () => resolve({ ok: false }));
  });
}

/** A TLS 1.2 client offering only CBC-SHA suites, which the server's policy refuses (docs/config-server.md, "Transport": TLS 1.2 offers only AEAD suites). */
export const TLS12_CBC_ONLY = {
  maxVersion: 'TLSv1.2',
  ciphers: 'ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES128-SHA',
} as const;
