#!/usr/bin/env node
process.exitCode = await (await import('../dist/cli/main.js')).run(process.argv.slice(2));
