import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = join(__dirname, '..', 'src');

/** Every `.ts` file under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** The files of `src/` that `file` imports (type-only imports included: they tie the modules together as much). */
function localImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/from '(\.{1,2}\/[^']+)'/g)].map((match) => {
    const target = resolve(dirname(file), match[1]!);
    return existsSync(`${target}.ts`) ? `${target}.ts` : join(target, 'index.ts');
  });
}

/** The first import circle found in `src/`, as a list of files, or undefined. */
function findCircle(): string[] | undefined {
  const graph = new Map(sourceFiles(SRC).map((file) => [file, localImports(file)]));
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (file: string): string[] | undefined => {
    const at = stack.indexOf(file);
    if (at !== -1) return [...stack.slice(at), file];
    if (done.has(file)) return undefined;
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      const circle = visit(next);
      if (circle) return circle;
    }
    stack.pop();
    done.add(file);
    return undefined;
  };
  for (const file of graph.keys()) {
    const circle = visit(file);
    if (circle) return circle.map((f) => relative(SRC, f));
  }
  return undefined;
}

describe('the modules of src/', () => {
  it('import each other without a circle', () => {
    expect(findCircle()).toBeUndefined();
  });
});
