import { InMemoryCache } from '@apollo/client';

/**
 * The console's Apollo cache: how records without an id are keyed, and how an answer that is
 * older than what the cache holds is kept from undoing it.
 */
export function createConsoleCache(): InMemoryCache {
  return new InMemoryCache({
    typePolicies: {
      // A CSR has no id; its name is unique within its cluster. Normalised, an approval's
      // result or a csrChanged message updates every list that shows the CSR.
      Csr: { keyFields: ['clusterId', 'name'] },
      // A node's runs come whole from the server (oldest first); take the new list as it is.
      Node: { fields: { installRuns: { merge: false } } },
      InstallRun: {
        fields: {
          // A run's diagnostics bundle, once uploaded, stays (a later upload replaces it). The node
          // query sent when the run failed can be answered after the upload's live message: its
          // "no diagnostics" is older news, and nothing later would bring the button back.
          diagnostics: { merge: (existing: unknown, incoming: unknown) => incoming ?? existing ?? null },
        },
      },
    },
  });
}
