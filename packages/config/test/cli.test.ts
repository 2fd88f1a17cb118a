import { handleCommandLine, helpText, type CliIo, type CommandSpec } from '../src';

const SPEC: CommandSpec = {
  name: 'demo',
  version: '1.2.3',
  summary: 'a demo service',
  usage: ['[options]'],
  options: [
    { flag: '--permanent', description: 'values never expire' },
    { flag: '--out <file>', description: 'where to write' },
  ],
  env: [{ name: 'PORT', default: '8081', description: 'port' }],
};

class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

function run(argv: string[], spec = SPEC): { out: string; err: string; code: number | undefined } {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    exit: (code) => {
      throw new Exit(code);
    },
  };
  try {
    handleCommandLine(spec, argv, io);
    return { out, err, code: undefined };
  } catch (e) {
    if (e instanceof Exit) return { out, err, code: e.code };
    throw e;
  }
}

describe('handleCommandLine', () => {
  it('--help prints usage, every option and every variable with its default, exit 0', () => {
    const r = run(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toBe(helpText(SPEC));
    expect(r.out).toContain('demo [options]');
    expect(r.out).toMatch(/--permanent\s+values never expire/);
    expect(r.out).toMatch(/--version, -V/);
    expect(r.out).toMatch(/PORT\s+8081\s+port/);
    expect(run(['-h']).code).toBe(0);
  });

  it('--version prints the version, exit 0', () => {
    expect(run(['--version'])).toEqual({ out: '1.2.3\n', err: '', code: 0 });
    expect(run(['-V']).out).toBe('1.2.3\n');
  });

  it('an unknown option or argument is one line on stderr and exit 2', () => {
    const r = run(['--nope']);
    expect(r).toEqual({ out: '', err: "demo: unknown option '--nope' (see demo --help)\n", code: 2 });
    expect(run(['extra']).code).toBe(2);
    expect(run(['extra']).err.split('\n')).toHaveLength(2);
  });

  it('lets known options through, with their values', () => {
    expect(run(['--permanent', '--out', 'x.txt']).code).toBeUndefined();
    expect(run(['--out=x.txt']).code).toBeUndefined();
    expect(run(['keygen'], { ...SPEC, positionals: 'any' }).code).toBeUndefined();
  });
});
