import { createServer, connect, type Server, type Socket } from 'node:net';
// Specs of this library run against the in-process Kubernetes API simulator: a test-only
// dependency on a tool, confined to this file.
import { generateCertificateRequest, startKubeSim, type KubeSim, type KubeSimOptions } from '@ccos/tools/kube-sim';
import { ClusterAddressGuard } from '../lib/cluster-address';
import { createKubeClient, type KubeClient } from '../lib/kube-client';

/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

export { generateCertificateRequest, startKubeSim, type KubeSim };

/** A simulator and an admin client for it. */
export interface SimWithClient {
  sim: KubeSim;
  client: KubeClient;
  stop(): Promise<void>;
}

/** Starts kube-sim in this process and a client authenticated by the admin kubeconfig. */
export async function startSimWithClient(options: KubeSimOptions = {}, requestTimeoutMs?: number): Promise<SimWithClient> {
  const sim = await startKubeSim(options);
  const client = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfig }, requestTimeoutMs });
  return {
    sim,
    client,
    async stop() {
      client.close();
      await sim.stop();
    },
  };
}

/** A client for `sim` that goes through `url` (e.g. a {@link CuttableProxy}). */
export function clientVia(sim: KubeSim, url: string, requestTimeoutMs?: number): KubeClient {
  return createKubeClient({ addresses: LOOPBACK, apiServerUrl: url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfig }, requestTimeoutMs });
}

/**
 * A TCP proxy in front of the simulator whose link can be cut (open connections reset, new ones
 * refused) and restored, to make watches and renewals fail like a network outage does.
 */
export class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private cut = false;
  url = '';

  private constructor(private readonly target: URL) {
    this.server = createServer((client) => this.forward(client));
  }

  static async start(target: KubeSim): Promise<CuttableProxy> {
    const proxy = new CuttableProxy(new URL(target.url));
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    const address = proxy.server.address();
    proxy.url = `https://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return proxy;
  }

  private forward(client: Socket): void {
    if (this.cut) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(this.target.port), this.target.hostname);
    const pair = [client, upstream];
    for (const socket of pair) {
      this.sockets.add(socket);
      socket.on('error', () => pair.forEach((s) => s.destroy()));
      socket.on('close', () => {
        this.sockets.delete(socket);
        pair.forEach((s) => s.destroy());
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Resets every open connection and refuses new ones until {@link restore}. */
  cutLink(): void {
    this.cut = true;
    for (const socket of this.sockets) {
      socket.resetAndDestroy();
    }
    this.sockets.clear();
  }

  restore(): void {
    this.cut = false;
  }

  async stop(): Promise<void> {
    this.cutLink();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

