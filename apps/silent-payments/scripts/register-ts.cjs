'use strict';
/**
 * Lets plain `node` run this package's TypeScript sources (`node -r ./scripts/register-ts.cjs
 * src/main.ts`): each `.ts` file is transpiled to CommonJS on require with the TypeScript
 * compiler the workspace already has, no type checking (`typecheck` does that). Used by the
 * child processes of the crash test and by the benchmark, so neither needs a build first.
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
