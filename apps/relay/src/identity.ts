import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { keyFingerprint } from '@repo/crypto';
import { readOrCreateSecretFile, type Logger } from '@repo/service';
import type { RelayConfig } from './config';

const RELAY_ID_FILE = 'relay-id';
const PUBLISH_TOKEN_FILE = 'publish-token';

/** The relay's id and tokens, read or generated in memory (written by {@link persistIdentity}). */
export interface RelayIdentity {
  relayId: string;
  publishToken: string;
  meshToken: string;
  /** Where the generated publish token lives (undefined when RELAY_PUBLISH_TOKEN is set). */
  publishTokenFile: string | undefined;
  relayIdFile: ReturnType<typeof readOrCreateSecretFile> | undefined;
  publishSecret: ReturnType<typeof readOrCreateSecretFile> | undefined;
}

function fingerprintOf(token: string): string {
  return keyFingerprint(new TextEncoder().encode(token));
}

/**
 * The relay's identity: RELAY_ID, or the one in DATA_DIR/relay-id, or one generated in memory;
 * its publish token: RELAY_PUBLISH_TOKEN, or DATA_DIR/publish-token, or one generated in memory;
 * its mesh token: RELAY_MESH_TOKEN, or the publish token. Nothing is written.
 */
export function relayIdentity(config: RelayConfig): RelayIdentity {
  const relayIdFile =
    config.relayId === undefined
      ? readOrCreateSecretFile(join(config.dataDir, RELAY_ID_FILE), () => `relay-${randomBytes(6).toString('hex')}`)
      : undefined;
  const publishTokenFile = config.publishToken === undefined ? join(config.dataDir, PUBLISH_TOKEN_FILE) : undefined;
  const publishSecret =
    publishTokenFile === undefined ? undefined : readOrCreateSecretFile(publishTokenFile, () => randomBytes(32).toString('hex'));
  const publishToken = config.publishToken ?? publishSecret!.value;
  return {
    relayId: config.relayId ?? relayIdFile!.value,
    publishToken,
    meshToken: config.meshToken ?? publishToken,
    publishTokenFile,
    relayIdFile,
    publishSecret,
  };
}

/** Writes the generated id and publish token (mode 0600) and logs them by path and fingerprint, never by value. */
export function persistIdentity(id: RelayIdentity, config: RelayConfig, logger: Logger): void {
  id.relayIdFile?.persist();
  if (id.relayIdFile?.created === true)
    logger.info({ file: join(config.dataDir, RELAY_ID_FILE), relay_id: id.relayId }, 'relay id created');
  if (id.publishSecret !== undefined) {
    id.publishSecret.persist();
    // Log where the token is, never its value (docs/relay.md, "Publishing").
    const file = id.publishTokenFile;
    logger.info({ file, fingerprint: fingerprintOf(id.publishToken), created: id.publishSecret.created }, 'publish token');
    if (id.publishSecret.exposed) logger.warn({ file }, 'publish token file is readable by other users');
  }
  if (config.peers.length > 0 || config.meshToken !== undefined) {
    logger.info(
      { fingerprint: fingerprintOf(id.meshToken), source: config.meshToken !== undefined ? 'RELAY_MESH_TOKEN' : 'publish token' },
      'mesh token',
    );
  }
}
