import { appendFileSync } from 'node:fs';
import type { ContractRecorder, MessageRecorder } from './recorder';

/**
 * For an app's jest setup file (`setupFilesAfterEnv`): after each test file, fails the file when a
 * response it provoked is not described by the document, and appends `<app> <file> <count>` to
 * the file `API_CONTRACT_REPORT` names (how many responses were checked).
 */
export function verifyAfterAll(recorder: ContractRecorder | MessageRecorder, app: string): void {
  const g = globalThis as unknown as { afterAll?: (fn: () => void) => void; expect?: { getState(): { testPath?: string } } };
  if (typeof g.afterAll !== 'function') throw new Error('verifyAfterAll runs in a jest setup file');
  g.afterAll(() => {
    const report = process.env.API_CONTRACT_REPORT;
    if (report) {
      const file = (g.expect?.getState().testPath ?? '?').split('/').slice(-2).join('/');
      appendFileSync(report, `${app} ${file} ${recorder.checked} ${recorder.problems.length}\n`);
    }
    recorder.verify();
  });
}
