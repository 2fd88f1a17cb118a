// Validates one API document with its standard validator, outside jest's module loader (the
// validators ship ES modules that jest's CommonJS runtime cannot load). Reads
// `{kind: "openapi" | "openrpc" | "asyncapi", document}` on stdin, prints the problems as a JSON array.
import { validate as validateOpenApi, compileErrors } from '@readme/openapi-parser';
import { validateOpenRPCDocument } from '@open-rpc/schema-utils-js';
import { Parser } from '@asyncapi/parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { kind, document } = JSON.parse(Buffer.concat(chunks).toString('utf8'));

/**
 * The errors of Redocly's `recommended` ruleset (what `redocly lint` reports by default: servers,
 * summaries, security declared on every operation, …); its warnings are left out.
 */
async function redoclyErrors(document) {
  const config = await createConfig({ extends: ['recommended'] });
  const found = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
  return found
    .filter((problem) => problem.severity === 'error')
    .map((problem) => `redocly ${problem.ruleId} at ${problem.location?.[0]?.pointer ?? '#'}: ${problem.message}`);
}

async function problems() {
  switch (kind) {
    case 'openapi': {
      const result = await validateOpenApi(document);
      return [...(result.valid ? [] : [compileErrors(result)]), ...(await redoclyErrors(document))];
    }
    case 'openrpc': {
      const result = validateOpenRPCDocument(document);
      if (result === true) return [];
      return [`${result.message ?? 'invalid'}${result.errors ? `: ${JSON.stringify(result.errors).slice(0, 4000)}` : ''}`];
    }
    case 'asyncapi': {
      const diagnostics = await new Parser().validate(document);
      // severity 0 is an error, 1 a warning; 2 and 3 are hints (such as "a newer version exists").
      return diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.path.join('.')}: ${d.message}`);
    }
    default:
      throw new Error(`unknown document kind ${kind}`);
  }
}

process.stdout.write(JSON.stringify(await problems()));
