import { describe, expect, it } from 'vitest';
import type { ArtifactCatalog } from './artifact-catalog';
import { RunArtifactSets } from './run-artifact-sets';

function world(options: { clusterOfNode?: (nodeId: string) => Promise<string>; maxRuns?: number } = {}) {
  const valid = new Map<string, { id: string; nodeId: string }>([
    ['Bearer agt_a', { id: 'run-a', nodeId: 'node-a' }],
    ['Bearer agt_b', { id: 'run-b', nodeId: 'node-b' }],
  ]);
  const reads = { tokens: 0, nodes: 0, overrides: 0 };
  const overrides = new Map<string, string | null>([['cluster-1', '4.14.2']]);
  const sets = new RunArtifactSets({
    clusters: { catalogWithOverride: async (clusterId, override) => ({ root: `${clusterId}:${override ?? 'follow'}` }) as unknown as ArtifactCatalog },
    agentRun: async (header) => {
      reads.tokens += 1;
      return (header === undefined ? undefined : valid.get(header)) ?? null;
    },
    clusterOfNode: options.clusterOfNode ?? (async () => {
      reads.nodes += 1;
      return 'cluster-1';
    }),
    override: async (clusterId) => {
      reads.overrides += 1;
      return overrides.get(clusterId) ?? null;
    },
    maxRuns: options.maxRuns,
  });
  const root = async (header: string) => ((await sets.catalogFor(header)) as unknown as { root: string } | null)?.root ?? null;
  return { sets, valid, reads, overrides, root };
}

describe('RunArtifactSets', () => {
  it('reads the run\'s cluster and override on its first download only, and the token on every one', async () => {
    const { reads, root } = world();
    expect(await root('Bearer agt_a')).toBe('cluster-1:4.14.2');
    expect(await root('Bearer agt_a')).toBe('cluster-1:4.14.2');
    expect(await root('Bearer agt_a')).toBe('cluster-1:4.14.2');
    expect(reads).toEqual({ tokens: 3, nodes: 1, overrides: 1 });
  });

  it('refuses a token revoked after the run downloaded, at its next request', async () => {
    const { valid, root } = world();
    expect(await root('Bearer agt_a')).toBe('cluster-1:4.14.2');
    valid.delete('Bearer agt_a');
    expect(await root('Bearer agt_a')).toBeNull();
  });

  it('keeps the override a run started with; a run starting later sees the new one', async () => {
    const { overrides, root } = world();
    expect(await root('Bearer agt_a')).toBe('cluster-1:4.14.2');
    overrides.set('cluster-1', null);
    expect(await root('Bearer agt_a')).toBe('cluster-1:4.14.2');
    expect(await root('Bearer agt_b')).toBe('cluster-1:follow');
  });

  it('asks again after a failed read, and forgets the oldest run beyond its limit', async () => {
    let fail = true;
    let nodes = 0;
    const { root } = world({
      maxRuns: 1,
      clusterOfNode: async () => {
        nodes += 1;
        if (fail) {
          throw new Error('database down');
        }
        return 'cluster-1';
      },
    });
    await expect(root('Bearer agt_a')).rejects.toThrow('database down');
    fail = false;
    expect(await root('Bearer agt_a')).toBe('cluster-1:4.14.2');
    expect(await root('Bearer agt_b')).toBe('cluster-1:4.14.2');
    expect(await root('Bearer agt_a')).toBe('cluster-1:4.14.2');
    expect(nodes).toBe(4);
  });
});
