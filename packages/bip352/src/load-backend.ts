import type { AnySecp256k1Backend, BackendName } from './backend';
import { SilentPaymentError } from './errors';

/** The backend used when none is named: the native libsecp256k1 binding (the fast path). */
export const DEFAULT_BACKEND: BackendName = 'native';

const cache = new Map<BackendName, AnySecp256k1Backend>();

/**
 * Loads a secp256k1 backend: `native` (the `secp256k1` N-API binding of libsecp256k1 and
 * this package's whole-transaction scanner addon, the default and the fastest), `wasm` (`tiny-secp256k1`, libsecp256k1 compiled to WebAssembly) or
 * `noble` (`@noble/curves`, pure JavaScript, the reference). A requested backend that cannot be
 * loaded is an error: there is never a silent fall back to a slower implementation.
 * @throws {SilentPaymentError} `BACKEND_UNAVAILABLE` naming the backend and the reason.
 * @throws {RangeError} for an unknown name.
 */
export function loadSecp256k1Backend(name: BackendName = DEFAULT_BACKEND): AnySecp256k1Backend {
  const cached = cache.get(name);
  if (cached) return cached;
  let backend: AnySecp256k1Backend;
  try {
    switch (name) {
      case 'native':
        backend = (require('./backends/native') as typeof import('./backends/native')).createNativeBackend();
        break;
      case 'wasm':
        backend = (require('./backends/wasm') as typeof import('./backends/wasm')).createWasmBackend();
        break;
      case 'noble':
        backend = (require('./backends/noble') as typeof import('./backends/noble')).createNobleBackend();
        break;
      default:
        throw new RangeError(`"name" expected 'native', 'wasm' or 'noble', got ${String(name)}`);
    }
  } catch (error) {
    if (error instanceof RangeError) throw error;
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new SilentPaymentError(
      'BACKEND_UNAVAILABLE',
      `secp256k1 backend '${name}' cannot be loaded (${reason}); install it (for 'native': the npm package ` +
        `secp256k1 with its prebuilt or compiled addon, and this package's scanner addon, compiled by its ` +
        `\`npm run build\` with node-gyp) or choose another backend explicitly`,
      { cause: error },
    );
  }
  cache.set(name, backend);
  return backend;
}

/** Whether a backend loads here (for tools that list what they can measure). */
export function isBackendAvailable(name: BackendName): boolean {
  try {
    loadSecp256k1Backend(name);
    return true;
  } catch {
    return false;
  }
}
