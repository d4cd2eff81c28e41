import 'reflect-metadata';
import { loadConfig } from './app/config';
import { startApi } from './app/start-api';

const config = await loadConfig();
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
