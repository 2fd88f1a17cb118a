'use strict';
/**
 * Lets plain `node` run a package's TypeScript sources (`node -r @repo/ts-register src/main.ts`):
 * each `.ts` file is transpiled to CommonJS on require with the workspace's TypeScript compiler,
 * no type checking (each package's `typecheck` does that). Used by benchmarks and by the child
 * processes of tests, so neither needs a build first.
 */
const { readFileSync } = require('node:fs');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  sourceMap: false,
  inlineSourceMap: true,
};

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};
