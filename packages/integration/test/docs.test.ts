import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT } from './support/processes';

/** Source, test, build and Markdown files of the apps, packages and scripts (no dependencies, no build output). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return ['node_modules', 'dist', 'build', 'data', '.turbo', 'fixtures'].includes(entry.name) ? [] : sourceFiles(path);
    return /\.(ts|mjs|cjs|js|c|h|md|sh)$/.test(entry.name) ? [path] : [];
  });
}

const FILES = ['apps', 'packages', 'scripts', 'deploy'].flatMap((dir) => sourceFiles(join(ROOT, dir)));

/** Headings of each page under docs/, as written (Markdown escapes removed). */
const HEADINGS = new Map(
  readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => [
      name,
      new Set(
        [...readFileSync(join(ROOT, 'docs', name), 'utf8').matchAll(/^#+\s+(.+)$/gm)].map((m) => m[1]!.replace(/\\(.)/g, '$1').trim()),
      ),
    ]),
);

/** The Markdown a reader follows links through: the root README, docs/ and every app's and package's README. */
const MARKDOWN = [
  join(ROOT, 'README.md'),
  ...sourceFiles(join(ROOT, 'docs')),
  ...FILES.filter((file) => file.endsWith('README.md')),
].filter((file) => file.endsWith('.md'));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .replace(/\\(.)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsOf = (file: string): Set<string> =>
  new Set([...readFileSync(file, 'utf8').matchAll(/^#+\s+(.+)$/gm)].map((m) => anchorOf(m[1]!)));

describe('docs/', () => {
  it('has a page for every service', () => {
    for (const page of ['README.md', 'config-server.md', 'rpc-proxy.md', 'silent-payments.md', 'relay.md', 'storage.md'])
      expect(HEADINGS.has(page)).toBe(true);
  });

  it("is linked from every app's README (the operator's guide points at the interface)", () => {
    for (const app of ['config-server', 'rpc-proxy', 'silent-payments', 'relay', 'storage'])
      expect({ app, links: readFileSync(join(ROOT, 'apps', app, 'README.md'), 'utf8').includes(`../../docs/${app}.md`) }).toEqual({
        app,
        links: true,
      });
  });

  it('has every section the code cites by page and heading', () => {
    const missing: string[] = [];
    for (const file of FILES) {
      for (const m of readFileSync(file, 'utf8').matchAll(/docs\/([a-z-]+\.md)[,:]?\s*"([^"\n]+)"/g)) {
        if (HEADINGS.get(m[1]!)?.has(m[2]!) !== true) missing.push(`${relative(ROOT, file)}: docs/${m[1]}, "${m[2]}"`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('is what the code cites: no comment points at a document outside the repository', () => {
    const outside: string[] = [];
    for (const file of FILES) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/\bspec 00[01]\b|\bcontract \d\b|ARCHITECTURE\.md|\.\.\/shared\/|\bshared\/(fixtures|spec|vectors)\//.test(line))
            outside.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(outside).toEqual([]);
  });

  it('has no broken link: every relative link in the Markdown names a file that exists, and a heading in it', () => {
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\]\(([^)\s#]*)(?:#([^)\s]+))?\)/g)) {
        const [, target = '', anchor] = m;
        if (/^[a-z]+:/.test(target) || (target === '' && anchor === undefined)) continue;
        const path = target === '' ? file : resolve(dirname(file), target);
        const ok = existsSync(path) && (anchor === undefined || !path.endsWith('.md') || anchorsOf(path).has(anchor));
        if (!ok) broken.push(`${relative(ROOT, file)}: ${m[0]}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
