import { PreconditionError } from '@ccos/api/util-graphql';
import { missingArtifacts } from '@ccos/shared/domain';
import { bare, message } from '@ccos/shared/messages';
import type { ArtifactCatalog } from './artifact-catalog';
import type { ArtifactSetStore } from './artifact-set-store';

/** Where a cluster's release version came from. */
export type ClusterVersionSource = 'OVERRIDE' | 'CLUSTER_VERSION' | 'SERVER_VERSION' | 'UNKNOWN';

/** Which set a cluster's installs download: the one imported for its version, the default folder, or none. */
export type ArtifactSetKind = 'IMPORTED' | 'DEFAULT' | 'NONE';

/** A cluster's artifact set as installs will see it. */
export interface ClusterArtifactSet {
  readonly clusterId: string;
  /** The release the cluster runs (or the operator's override); null when it could not be read. */
  readonly version: string | null;
  readonly versionSource: ClusterVersionSource;
  /** Why the version could not be read (the cluster did not answer). */
  readonly versionProblem: string | null;
  readonly kind: ArtifactSetKind;
  /** The version of the set served (the default folder's VERSION for DEFAULT). */
  readonly setVersion: string | null;
  readonly artifacts: number;
  readonly bytes: number;
  /** What an install needs that the set lacks (`binary/oc`, …); empty = complete. */
  readonly missing: readonly string[];
  /** The catalog that serves the set; null for NONE. */
  readonly catalog: ArtifactCatalog | null;
}

export interface ClusterArtifactsOptions {
  readonly store: ArtifactSetStore;
  /** The version the operator set for the cluster, or null to follow the cluster. */
  readonly override: (clusterId: string) => Promise<string | null>;
  /** Asks the cluster its release (ClusterVersion on OpenShift, `/version` otherwise). */
  readonly detect: (clusterId: string) => Promise<{ version: string; source: 'CLUSTER_VERSION' | 'SERVER_VERSION' }>;
  /** How long a version read from a cluster is trusted (default 60 s). */
  readonly cacheMs?: number;
}

/**
 * Decides which artifact set each cluster's installs use: the set imported for the version the
 * cluster runs (read from the cluster, or the operator's per-cluster override), else the default
 * folder at the top of ARTIFACTS_DIR (the layout before per-release sets). An explicit override
 * to a version without a set uses nothing: the operator asked for that release.
 */
export class ClusterArtifacts {
  private readonly detected = new Map<string, { at: number; value: Promise<{ version: string | null; source: ClusterVersionSource; problem: string | null }> }>();

  constructor(private readonly options: ClusterArtifactsOptions) {}

  get store(): ArtifactSetStore {
    return this.options.store;
  }

  /** The cluster's set. The cluster is asked its version only when a set could depend on it. */
  async resolve(clusterId: string, { alwaysReadVersion = false } = {}): Promise<ClusterArtifactSet> {
    const override = await this.options.override(clusterId);
    let version: string | null = override;
    let versionSource: ClusterVersionSource = override ? 'OVERRIDE' : 'UNKNOWN';
    let versionProblem: string | null = null;
    if (!override && (alwaysReadVersion || (await this.options.store.hasSets()))) {
      const reading = await this.readVersion(clusterId);
      ({ version, source: versionSource, problem: versionProblem } = reading);
    }
    const imported = version ? await this.options.store.catalog(version) : null;
    const catalog = imported ?? (override ? null : this.options.store.defaultCatalog);
    const manifest = catalog ? await catalog.manifest() : null;
    const hasFiles = (manifest?.artifacts.length ?? 0) > 0;
    return {
      clusterId,
      version,
      versionSource,
      versionProblem,
      kind: imported ? 'IMPORTED' : hasFiles ? 'DEFAULT' : 'NONE',
      setVersion: hasFiles || imported ? (manifest?.version ?? null) : null,
      artifacts: manifest?.artifacts.length ?? 0,
      bytes: manifest?.artifacts.reduce((sum, artifact) => sum + artifact.size, 0) ?? 0,
      missing: missingArtifacts(hasFiles ? (manifest?.artifacts ?? []) : []),
      catalog: hasFiles || imported ? catalog : null,
    };
  }

  /** The catalog a cluster's agents download from (without looking at its files). */
  async catalogFor(clusterId: string): Promise<ArtifactCatalog> {
    return this.catalogWithOverride(clusterId, await this.options.override(clusterId));
  }

  /** The catalog a cluster's agents download from, given the cluster's override as already read. */
  async catalogWithOverride(clusterId: string, override: string | null): Promise<ArtifactCatalog> {
    if (override) {
      return (await this.options.store.catalog(override)) ?? this.options.store.emptyCatalog;
    }
    if (!(await this.options.store.hasSets())) {
      return this.options.store.defaultCatalog;
    }
    const { version } = await this.readVersion(clusterId);
    return (version ? await this.options.store.catalog(version) : null) ?? this.options.store.defaultCatalog;
  }

  /** Throws FAILED_PRECONDITION naming every missing item when the cluster's set cannot install a worker. */
  async requireComplete(clusterId: string): Promise<ClusterArtifactSet> {
    let set = await this.resolve(clusterId);
    if (set.missing.length > 0) {
      // The refusal names the release the operator has to import.
      set = set.version ? set : await this.resolve(clusterId, { alwaysReadVersion: true });
    }
    if (set.missing.length > 0) {
      const which = set.kind === 'NONE'
        ? message('artifacts.which.none', { version: set.version ?? 'none', problem: set.versionProblem ?? 'none' })
        : set.kind === 'IMPORTED'
          ? message('artifacts.which.imported', { version: set.setVersion ?? '?' })
          : message('artifacts.which.defaultFolder', { version: set.setVersion ?? 'none' });
      throw new PreconditionError(
        message('artifacts.incomplete', { which: bare(which), missing: set.missing.join(', ') }),
        { missing: [...set.missing], version: set.version, artifactSet: set.kind },
      );
    }
    return set;
  }

  /** Forgets what a cluster said its version was (after an override change). */
  forget(clusterId: string): void {
    this.detected.delete(clusterId);
  }

  private readVersion(clusterId: string) {
    const cached = this.detected.get(clusterId);
    if (cached && Date.now() - cached.at < (this.options.cacheMs ?? 60_000)) {
      return cached.value;
    }
    const value = this.options.detect(clusterId).then(
      ({ version, source }) => ({ version: version as string | null, source: source as ClusterVersionSource, problem: null as string | null }),
      (error: unknown) => {
        // Not cached: the next request asks again.
        this.detected.delete(clusterId);
        return { version: null, source: 'UNKNOWN' as ClusterVersionSource, problem: (error as Error).message };
      },
    );
    this.detected.set(clusterId, { at: Date.now(), value });
    return value;
  }
}
