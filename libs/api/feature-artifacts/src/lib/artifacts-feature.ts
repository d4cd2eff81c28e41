import type { Router } from 'express';
import type { ClusterConnections } from '@ccos/api/data-access-cluster-connections';
import { artifactRoutes } from './artifact-routes';
import { ArtifactSetStore } from './artifact-set-store';
import type { ArtifactVersionOverrides } from './artifact-set.resolver';
import { type ArtifactUploadOptions, type UploaderRole, artifactUploadRoutes } from './artifact-upload-route';
import { ClusterArtifacts } from './cluster-artifacts';
import { type AgentRunOf, RunArtifactSets } from './run-artifact-sets';

/** How long the cluster is given to say which release it runs. */
const VERSION_READ_TIMEOUT_MS = 10_000;

export interface ArtifactsFeatureOptions {
  /** ARTIFACTS_DIR: the imported sets, and the default set at its top. */
  readonly artifactsDir: string;
  /** Each cluster's connection, to ask the release it runs. */
  readonly connections: Pick<ClusterConnections, 'version'>;
  /** The operator's per-cluster version override (the clusters table's artifact_version). */
  readonly overrides: ArtifactVersionOverrides & { get(clusterId: string): Promise<string | null> };
  /** The install run whose set a request with this Authorization header downloads, when it carries a valid agent token. */
  readonly agentRun: AgentRunOf;
  /** The cluster of a node (an agent's run's). */
  readonly clusterOfNode: (nodeId: string) => Promise<string>;
  /** The signed-in user of a request: they may download the default set and import sets. */
  readonly sessionUser: UploaderRole;
  readonly uploadMaxBytes: number;
  /** Told about every import through the upload route (the audit log). */
  readonly onImport?: ArtifactUploadOptions['onImport'];
}

/** The artifact feature as the composition root sees it. */
export interface ArtifactsFeature {
  readonly sets: ArtifactSetStore;
  /** Which set each cluster's installs use. */
  readonly clusters: ClusterArtifacts;
  readonly versionOverrides: ArtifactVersionOverrides;
  /** Throws FAILED_PRECONDITION naming what the cluster's set lacks, so an install is refused up front. */
  requireComplete(clusterId: string): Promise<void>;
  /** sha256 (hex) of the manifest served for the cluster's set, which its agents check every download against. */
  manifestSha256(clusterId: string): Promise<string>;
  /** Mounts `/artifacts` (agents download their cluster's set; signed-in users the default one) and `POST /admin/artifact-sets`. */
  mountRoutes(app: Router): void;
}

export function createArtifactsFeature(options: ArtifactsFeatureOptions): ArtifactsFeature {
  const sets = new ArtifactSetStore(options.artifactsDir);
  const clusters = new ClusterArtifacts({
    store: sets,
    override: (clusterId) => options.overrides.get(clusterId),
    detect: (clusterId) => options.connections.version(clusterId, AbortSignal.timeout(VERSION_READ_TIMEOUT_MS)),
  });
  const runSets = new RunArtifactSets({ clusters, agentRun: options.agentRun, clusterOfNode: options.clusterOfNode, override: (clusterId) => options.overrides.get(clusterId) });
  return {
    sets,
    clusters,
    versionOverrides: options.overrides,
    requireComplete: async (clusterId) => void (await clusters.requireComplete(clusterId)),
    manifestSha256: async (clusterId) => (await (await clusters.catalogFor(clusterId)).manifestDocument()).sha256,
    mountRoutes(app) {
      app.use(
        '/artifacts',
        artifactRoutes(async (header) => {
          const catalog = await runSets.catalogFor(header);
          if (catalog !== null) {
            return catalog;
          }
          return (await options.sessionUser(header)) ? sets.defaultCatalog : null;
        }),
      );
      app.use(artifactUploadRoutes({ store: sets, uploader: options.sessionUser, maxBytes: options.uploadMaxBytes, onImport: options.onImport }));
    },
  };
}
