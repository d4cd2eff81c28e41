import { describe, expect, it } from 'vitest';
import { formatMessage } from '@ccos/shared/messages';
import type { ClusterConnections } from '@ccos/api/data-access-cluster-connections';
import type { NodeSummary } from '@ccos/api/data-access-kube';
import type { CsrService } from '@ccos/api/feature-csrs';
import { clusterProbeFrom } from './cluster-probe';

/** The probe reads only the watch cache's Nodes: a cache holding these Nodes stands for the cluster. */
function probeOver(nodes: ReadonlyArray<Pick<NodeSummary, 'name' | 'ready' | 'addresses'>>) {
  const connections = { watch: async () => ({ nodes: () => nodes }) } as unknown as ClusterConnections;
  return clusterProbeFrom(connections, {} as CsrService);
}

describe('cluster probe conflicts', () => {
  it('names a Node of the same name and a Node with the same address, by code, in English and Chinese', async () => {
    const probe = probeOver([
      { name: 'w-1', ready: false, addresses: [{ type: 'InternalIP', address: '198.18.0.50' }] },
      { name: 'w-9', ready: true, addresses: [{ type: 'InternalIP', address: '198.18.0.11' }] },
    ]);
    const { hostname, ip } = await probe.conflicts('c1', 'w-1', '198.18.0.11');
    expect(hostname?.message).toBe('a Node named w-1 already exists in the cluster (not Ready); delete it first if it is a leftover of this host');
    expect(hostname && formatMessage('zh-CN', hostname.code, hostname.params)).toBe('集群中已有名为 w-1 的 Node（未就绪）；如果它是此主机先前留下的，请先删除它');
    expect(ip?.message).toBe('Node w-9 of the cluster already uses 198.18.0.11');
    expect(ip && formatMessage('zh-CN', ip.code, ip.params)).toBe('集群的 Node w-9 已在使用 198.18.0.11');
  });

  it('finds no conflict for a new name and address', async () => {
    const probe = probeOver([{ name: 'w-9', ready: true, addresses: [{ type: 'InternalIP', address: '198.18.0.11' }] }]);
    expect(await probe.conflicts('c1', 'w-2', '198.18.0.12')).toEqual({ hostname: null, ip: null });
  });
});
