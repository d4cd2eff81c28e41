/**
 * Monaco's workers, bundled beside this script (scripts/build.mjs) and loaded from the
 * service itself: GraphiQL's own setups load them from esm.sh or need Vite/webpack.
 * Imported first by main.tsx, so the environment is set before Monaco starts.
 */
const workerUrl = (name: string) => new URL(`./${name}.worker.js`, import.meta.url);

(globalThis as { MonacoEnvironment?: unknown }).MonacoEnvironment = {
  getWorker(_workerId: string, label: string): Worker {
    switch (label) {
      case 'json':
        return new Worker(workerUrl('json'), { name: 'json' });
      case 'graphql':
        return new Worker(workerUrl('graphql'), { name: 'graphql' });
      default:
        return new Worker(workerUrl('editor'), { name: 'editor' });
    }
  },
};
