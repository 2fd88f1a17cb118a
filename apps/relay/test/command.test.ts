import { join } from 'node:path';
import { describeEntryPoint } from '@repo/config/testing';
import { COMMAND } from '../src/command';
import { loadConfig } from '../src/config';

// The entry point's command line (README, "Operations"), run as an operator would: the built dist/main.js.
describeEntryPoint({ name: 'relay', appDir: join(__dirname, '..'), command: COMMAND, loadConfig });
