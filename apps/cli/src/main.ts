#!/usr/bin/env node
import { runCli } from './app/cli';

// ccos-scaler: the service's GraphQL API for scripts and terminals (see README, "ccos-scaler CLI").
const code = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  io: { out: (line) => process.stdout.write(`${line}\n`), err: (line) => process.stderr.write(`${line}\n`), terminal: process.stdout.isTTY === true },
  stdin: process.stdin,
});
process.exitCode = code;
