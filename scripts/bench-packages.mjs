// The packages `pnpm bench` runs (turbo runs each package's `bench` script), for the scripts that
// read or guard their reports: bench-report.mjs and bench-smoke.mjs.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Each package with a bench script, as `{ id: 'apps/relay', dir }`, in a stable order. */
export function benchPackages(root) {
  const found = [];
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(join(root, group)).sort()) {
      const pkg = join(root, group, name, 'package.json');
      if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).scripts?.bench)
        found.push({ id: `${group}/${name}`, dir: join(root, group, name) });
    }
  }
  return found;
}
