import { Writable } from 'node:stream';
import { CLIENT_VERSION } from '../src/client';
import { runCli } from '../src/cli';

function sink(): { stream: Writable; text: () => string } {
  let text = '';
  return {
    stream: new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    }),
    text: () => text,
  };
}

describe('config-client command line', () => {
  let errors: string[];
  let logs: string[];
  beforeEach(() => {
    errors = [];
    logs = [];
    jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args.join(' ')));
    jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logs.push(args.join(' ')));
  });
  afterEach(() => jest.restoreAllMocks());

  it('--version alone prints the version, exit 0', async () => {
    const out = sink();
    expect(await runCli(['--version'], {}, out.stream)).toBe(0);
    expect(out.text()).toBe(`${CLIENT_VERSION}\n`);
  });

  it('--help prints the usage with every option and variable, exit 0', async () => {
    expect(await runCli(['--help'], {})).toBe(0);
    const text = logs.join('\n');
    for (const word of [
      'get <env>/<file>',
      'watch',
      'run',
      'keygen',
      '--url',
      'CONFIG_SERVER_URL',
      'default https://localhost:6666',
      '--version',
    ]) {
      expect(text).toContain(word);
    }
  });

  it('an unknown option is one line on stderr and exit 2', async () => {
    expect(await runCli(['get', 'dev/app.conf', '--bogus'], {})).toBe(2);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^config-client: Unknown option '--bogus'.* \(see config-client --help\)$/);
    expect(errors[0]).not.toContain('\n');
  });
});
