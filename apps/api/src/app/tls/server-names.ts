import { hostname, networkInterfaces } from 'node:os';
import type { ApiConfig } from '../config';

/**
 * The names a generated certificate carries: this machine's name and addresses, the
 * listen address and AGENT_API_URL's host. Agents do not need them (they pin the CA
 * without a name check), but people and tools that trust the CA then get a certificate
 * that names the address they typed.
 */
export function serverNames(config: Pick<ApiConfig, 'host' | 'agentApiUrl'>): string[] {
  const names = new Set(['localhost', '127.0.0.1', '::1', hostname()]);
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      names.add(address.address.replace(/%.*$/, ''));
    }
  }
  if (config.host !== '0.0.0.0' && config.host !== '::') {
    names.add(config.host);
  }
  if (config.agentApiUrl !== null) {
    names.add(new URL(config.agentApiUrl).hostname.replace(/^\[|\]$/g, ''));
  }
  return [...names].filter((name) => name.length > 0);
}
