import 'reflect-metadata';
import { runArtifactsCli } from './artifacts-cli';

process.exitCode = await runArtifactsCli(process.argv.slice(2), process.env, (text) => process.stdout.write(text), (text) => process.stderr.write(text));
