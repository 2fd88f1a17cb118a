import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The version reported in health, status, StateSync and the API documents. */
export const RELAY_VERSION: string = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string })
  .version;
