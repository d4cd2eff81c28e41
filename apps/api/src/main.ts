import 'reflect-metadata';
import { forgetSecretVariables, loadConfig } from './app/config';
import { startApi } from './app/start-api';

// A configuration the service cannot start with is said in one line, without a stack trace.
const config = await loadConfig().catch((error: unknown) => {
  process.stderr.write(`ccos-scaler cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
// Read once; the processes the service starts do not inherit them.
forgetSecretVariables();
const api = await startApi(config);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) {
      return;
    }
    stopping = true;
    api.logger.info({ signal }, 'shutting down');
    api.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
