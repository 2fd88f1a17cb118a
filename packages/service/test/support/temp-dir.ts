import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

// Registered once, by the first test file that imports this module: the folders it made go
// when its tests are done (a test that closed one to everyone does not stop its removal).
afterAll(() => {
  for (const dir of made.splice(0)) {
    try {
      chmodSync(dir, 0o700);
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // already gone
    }
  }
});

/** A new folder in the system's temporary directory, removed once the test file's tests are done. */
export function temporaryDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  made.push(dir);
  return dir;
}
