import { join, resolve } from 'node:path';
import { startService as startServiceProcess, type ServiceProcess } from '@repo/service/testing';

/** The repository root. */
export const ROOT = resolve(__dirname, '..', '..', '..', '..');

export type { ServiceLog, ServiceProcess } from '@repo/service/testing';

/**
 * Starts `apps/<app>/dist/main.js` with `env` on top of a minimal environment (its own temporary
 * `DATA_DIR`, loopback only) and resolves once it logs `readyMessage` (`@repo/service/testing`).
 */
export function startService(name: string, app: string, env: Record<string, string>, readyMessage: string): Promise<ServiceProcess> {
  return startServiceProcess({ name, appDir: join(ROOT, 'apps', app), env, ready: readyMessage });
}

/** Polls `probe` every 100 ms until it returns a value that is not undefined. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}${lastError ? `: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}
