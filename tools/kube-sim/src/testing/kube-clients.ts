import { request } from 'node:https';
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import type { KubeSim } from '../kube-sim';

/** A client-node KubeConfig for the simulator, as admin or with other credentials. */
export function kubeConfigFor(sim: KubeSim, credentials?: { token: string } | { certPem: string; keyPem: string }): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(credentials ? sim.kubeconfigFor(credentials, 'test-user') : sim.kubeconfig);
  return kc;
}

/** The Status body and code of a failed client-node call. */
export async function apiFailure(call: Promise<unknown>): Promise<{ code: number; status: Record<string, unknown> }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiException) {
      const body: unknown = typeof error.body === 'string' ? JSON.parse(error.body || '{}') : error.body;
      return { code: error.code, status: (body ?? {}) as Record<string, unknown> };
    }
    throw error;
  }
  throw new Error('the call succeeded');
}

/** One raw HTTPS request to the simulator (admin client certificate unless a token or cert is given). */
export function rawRequest(
  sim: KubeSim,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; token?: string; cert?: { certPem: string; keyPem: string }; anonymous?: boolean },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(options.path, sim.url);
  const cert = options.anonymous || options.token ? undefined : (options.cert ?? sim.adminClientCert);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        ca: sim.caCertPem,
        cert: cert?.certPem,
        key: cert?.keyPem,
        headers: {
          ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
          // Node frames no body of a DELETE unless told its length.
          ...(options.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(options.body)) } : {}),
          ...options.headers,
        },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Polls until `check` returns a value other than undefined. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error('condition not met in time');
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
