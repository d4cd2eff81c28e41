import { describe, expect, it } from 'vitest';
import type { ClusterConnections } from '@ccos/api/data-access-cluster-connections';
import type { NodeSummary } from '@ccos/api/data-access-kube';
import type { CsrService } from '@ccos/api/feature-csrs';
import { PreconditionError } from '@ccos/api/util-graphql';
import { AppError } from '@ccos/shared/domain';
import { formatMessage, formatServerText, message } from '@ccos/shared/messages';
import { CLEANUP_DENY_REASON, clusterLeftoverCleaner, clusterProbeFrom } from './cluster-probe';

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

describe('cluster leftover cleaner', () => {
  it("denies a leftover CSR through the CSR service's decision path, as the operator who asked, with the cleanup's reason", async () => {
    const denials: unknown[][] = [];
    const cleaner = clusterLeftoverCleaner({} as ClusterConnections, { deny: async (...args) => (denials.push(args), {} as never) });
    await cleaner.denyCsr('c1', 'csr-old', 'alice');
    expect(denials).toEqual([['c1', 'csr-old', 'alice', CLEANUP_DENY_REASON]]);
  });

  it("refuses, by code, to go on when the CSR service will not deny a leftover CSR, nesting its refusal", async () => {
    // The CSR was approved meanwhile: the denial is refused, and the operator reads why in their language.
    const alreadyApproved = new PreconditionError(message('csr.alreadyDecided', { name: 'csr-old', state: 'approved', verb: 'deny' }));
    const cleaner = clusterLeftoverCleaner({} as ClusterConnections, { deny: async () => Promise.reject(alreadyApproved) });
    const error = await cleaner.denyCsr('c1', 'csr-old', 'alice').then(() => null, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(AppError);
    const { extensions, message: text } = error as AppError;
    expect(text).toBe(`could not deny CSR csr-old: ${alreadyApproved.message}`);
    expect(extensions).toMatchObject({ code: 'FAILED_PRECONDITION', messageCode: 'cleanup.csrNotDenied', messageParams: { name: 'csr-old', reason: { code: 'csr.alreadyDecided' } } });
    expect(formatServerText('zh-CN', extensions['messageCode'] as string, extensions['messageParams'], null)).toMatch(/^无法拒绝 CSR csr-old：/);
  });
});
