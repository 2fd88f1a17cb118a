#!/usr/bin/env node
// The CLI lives in dist/ once built; this committed entry lets the install link the command on a
// fresh clone, before the build has written dist/ (pnpm warns "Failed to create bin" otherwise).
require('../dist/cli.js');
