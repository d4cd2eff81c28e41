import type { ArtifactCatalog } from './artifact-catalog';
import type { ClusterArtifacts } from './cluster-artifacts';

/** The install run an agent token belongs to, read on every request; null for a token that is not (or no longer) valid. */
export type AgentRunOf = (authorization: string | undefined) => Promise<{ readonly id: string; readonly nodeId: string } | null>;

export interface RunArtifactSetsOptions {
  readonly clusters: Pick<ClusterArtifacts, 'catalogWithOverride'>;
  readonly agentRun: AgentRunOf;
  /** The cluster a node belongs to (never changes for a node). */
  readonly clusterOfNode: (nodeId: string) => Promise<string>;
  /** The operator's version override for the cluster, or null to follow the cluster. */
  readonly override: (clusterId: string) => Promise<string | null>;
  /** How many runs are remembered (the oldest is forgotten first; forgetting only costs a re-read). */
  readonly maxRuns?: number;
}

/** What a run's downloads depend on beyond its token. */
interface RunSet {
  readonly clusterId: string;
  readonly override: string | null;
}

/**
 * The catalog an agent's download comes from, with one query per request: the token is
 * authenticated every time (a revoked or expired token is refused at once), while its run's
 * cluster and that cluster's override are read on the run's first download and kept for the
 * run's life. Keeping the override is what a run needs anyway: its agent checks every download
 * against the manifest handed to it at launch, so a set changed mid-run could only fail it.
 */
export class RunArtifactSets {
  private readonly runs = new Map<string, Promise<RunSet>>();

  constructor(private readonly options: RunArtifactSetsOptions) {}

  /** The catalog of the run whose agent token `authorization` carries; null when it carries none that is valid. */
  async catalogFor(authorization: string | undefined): Promise<ArtifactCatalog | null> {
    const run = await this.options.agentRun(authorization);
    if (run === null) {
      return null;
    }
    const { clusterId, override } = await this.setOf(run.id, run.nodeId);
    return this.options.clusters.catalogWithOverride(clusterId, override);
  }

  private setOf(runId: string, nodeId: string): Promise<RunSet> {
    const known = this.runs.get(runId);
    if (known !== undefined) {
      return known;
    }
    const reading = (async () => {
      const clusterId = await this.options.clusterOfNode(nodeId);
      return { clusterId, override: await this.options.override(clusterId) };
    })();
    // A failed read is not kept: the next download asks again.
    reading.catch(() => this.runs.delete(runId));
    this.runs.set(runId, reading);
    if (this.runs.size > (this.options.maxRuns ?? 10_000)) {
      const oldest = this.runs.keys().next().value;
      if (oldest !== undefined) {
        this.runs.delete(oldest);
      }
    }
    return reading;
  }
}
