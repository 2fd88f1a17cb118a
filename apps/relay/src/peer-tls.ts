import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { isIP } from 'node:net';
import type { ClientOptions } from 'ws';

/** How a relay trusts `wss://` peers whose certificate no public CA signed. */
export interface PeerTlsOptions {
  /** PEM of the CA (or the self-signed certificate) to trust, from `RELAY_PEER_CA_FILE`. */
  ca?: string;
  /** Pinned SHA-256 certificate fingerprints (`AB:CD:…`), from `RELAY_PEER_FINGERPRINT`. */
  fingerprints: string[];
  /** Give up on the certificate probe after this long (ms). */
  timeoutMs?: number;
}

function toPem(der: Buffer): string {
  return `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** Reads the certificate a TLS server presents, without trusting it (the caller checks its fingerprint). */
function probeCertificate(url: URL, timeoutMs: number): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const socket = tlsConnect(
      { host, port: Number(url.port || 443), servername: isIP(host) === 0 ? host : undefined, rejectUnauthorized: false },
      () => {
        const cert = socket.getPeerCertificate(true);
        socket.destroy();
        resolve(cert);
      },
    );
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('TLS handshake timed out')));
    socket.once('error', reject);
  });
}

/**
 * TLS options of the WebSocket client for a `wss://` peer. With pinned fingerprints: the peer's
 * certificate is probed first and must match a pin (before any token is sent); the real
 * connection then trusts exactly that certificate as its root and checks the pin again during
 * the handshake, so a different certificate on the second connection is refused. With a CA file:
 * ordinary verification against that CA (host name checked). Otherwise: the system's CAs.
 * Rejects when the probe fails or the certificate matches no pin.
 */
export async function peerTlsClientOptions(url: URL, options: PeerTlsOptions): Promise<ClientOptions> {
  if (url.protocol !== 'wss:') return {};
  if (options.fingerprints.length > 0) {
    const cert = await probeCertificate(url, options.timeoutMs ?? 5_000);
    if (!options.fingerprints.includes(cert.fingerprint256)) {
      throw new Error(`peer certificate ${cert.fingerprint256} matches no RELAY_PEER_FINGERPRINT`);
    }
    const pins = options.fingerprints;
    const checkServerIdentity = (_host: string, peer: PeerCertificate): Error | undefined =>
      pins.includes(peer.fingerprint256)
        ? undefined
        : new Error(`peer certificate ${peer.fingerprint256} matches no RELAY_PEER_FINGERPRINT`);
    return { ca: toPem(cert.raw), checkServerIdentity } as unknown as ClientOptions;
  }
  if (options.ca !== undefined) return { ca: options.ca };
  return {};
}
