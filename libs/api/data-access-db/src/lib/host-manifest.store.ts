import { type DataSource, In, type Repository } from 'typeorm';
import { type FileDrift, type InstallStep, type RunningKubelet, manifestOf, runningKubeletOf } from '@ccos/shared/domain';
import type { CodedText } from '@ccos/shared/messages';
import { HostManifestEntity } from './entities/host-manifest.entity';
import { isUuid } from './node.store';

/** What an inspection of a host found: the files not as recorded, or why it could not look. */
export type HostInspection =
  | { readonly inspectedAt: Date; readonly drift: readonly FileDrift[]; readonly running?: RunningKubelet }
  | { readonly inspectedAt: Date; readonly problem: CodedText };

/** `host_manifests`: what each node's host runs, recorded from its install runs' step events. */
export class HostManifestStore {
  private readonly manifests: Repository<HostManifestEntity>;
  private readonly dataSource: DataSource;

  constructor(dataSource: DataSource) {
    this.manifests = dataSource.getRepository(HostManifestEntity);
    this.dataSource = dataSource;
  }

  /**
   * Records what a succeeded run left on its host, from the SUCCEEDED events of its steps and, for
   * a retry that started at a later step, of the runs before it back to the node's last run from
   * PREFLIGHT (their earlier steps wrote the rest), in the order they came: a later write of a path
   * wins. It replaces the node's manifest and forgets the last inspection, which was of what an
   * earlier install wrote. Null (and nothing recorded) when no step said what it wrote: an agent
   * from before manifests.
   */
  async recordRun(run: { readonly id: string; readonly nodeId: string }, recordedAt: Date): Promise<HostManifestEntity | null> {
    const succeeded: Array<{ step: InstallStep; detail: Record<string, unknown> | null }> = await this.dataSource.query(
      `WITH this_run AS (SELECT started_at FROM install_runs WHERE id = $1),
            chain_start AS (
              SELECT coalesce(max(r.started_at), (SELECT started_at FROM this_run)) AS started_at FROM install_runs r, this_run
               WHERE r.node_id = $2 AND r.start_step = 'PREFLIGHT' AND r.started_at <= this_run.started_at)
       SELECT e.step, e.detail FROM step_events e JOIN install_runs r ON r.id = e.run_id, this_run, chain_start
        WHERE r.node_id = $2 AND e.status = 'SUCCEEDED' AND r.started_at BETWEEN chain_start.started_at AND this_run.started_at
        ORDER BY r.started_at, e.seq`,
      [run.id, run.nodeId],
    );
    const files = manifestOf(succeeded.map((event) => ({ step: event.step, detail: event.detail })));
    if (files.length === 0) {
      return null;
    }
    const binaries = succeeded.findLast((event) => event.step === 'DOWNLOAD_BINARIES')?.detail ?? {};
    const running = runningKubeletOf(succeeded.findLast((event) => event.step === 'START_KUBELET')?.detail);
    const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
    const manifest = this.manifests.create({
      nodeId: run.nodeId,
      runId: run.id,
      recordedAt,
      artifactSetVersion: text(binaries['manifestVersion']),
      artifactManifestSha256: text(binaries['manifestSha256']),
      files,
      runningAtInstall: running,
      runningNow: null,
      inspectedAt: null,
      drift: [],
      inspectionProblem: null,
    });
    await this.manifests.upsert(manifest, ['nodeId']);
    return manifest;
  }

  /** The manifests of the nodes in these statuses, with each node's cluster, leaving out the files (for counting states). */
  async ofNodesIn(statuses: readonly string[]): Promise<Array<{ readonly clusterId: string; readonly manifest: Pick<HostManifestEntity, 'nodeId' | 'artifactManifestSha256' | 'inspectedAt' | 'drift'> }>> {
    const rows = await this.manifests
      .createQueryBuilder('manifest')
      .innerJoin('nodes', 'node', 'node.id = manifest.node_id')
      .select(['manifest.node_id AS node_id', 'manifest.artifact_manifest_sha256 AS artifact_manifest_sha256', 'manifest.inspected_at AS inspected_at', 'manifest.drift AS drift', 'node.cluster_id AS cluster_id'])
      .where('node.status = ANY(:statuses)', { statuses: [...statuses] })
      .getRawMany<{ node_id: string; artifact_manifest_sha256: string | null; inspected_at: Date | null; drift: FileDrift[]; cluster_id: string }>();
    return rows.map((row) => ({
      clusterId: row.cluster_id,
      manifest: { nodeId: row.node_id, artifactManifestSha256: row.artifact_manifest_sha256, inspectedAt: row.inspected_at, drift: row.drift },
    }));
  }

  /** The manifests of these nodes (those that have one), leaving out the files. */
  async statesOf(nodeIds: readonly string[]): Promise<Array<Pick<HostManifestEntity, 'nodeId' | 'artifactManifestSha256' | 'inspectedAt' | 'drift'>>> {
    const ids = nodeIds.filter(isUuid);
    return ids.length === 0 ? [] : this.manifests.find({ where: { nodeId: In(ids) }, select: { nodeId: true, artifactManifestSha256: true, inspectedAt: true, drift: true } });
  }

  find(nodeId: string): Promise<HostManifestEntity | null> {
    return isUuid(nodeId) ? this.manifests.findOneBy({ nodeId }) : Promise.resolve(null);
  }

  /**
   * Keeps what an inspection of the record of run `runId` found; nothing when an install recorded
   * the node anew meanwhile (the inspection compared the files with the old record). One that
   * could not look at the host keeps the drift found before (it is not known to be gone) beside
   * the problem.
   */
  async saveInspection(nodeId: string, runId: string, inspection: HostInspection): Promise<HostManifestEntity | null> {
    const found = 'problem' in inspection
      ? { inspectedAt: inspection.inspectedAt, inspectionProblem: inspection.problem }
      : { inspectedAt: inspection.inspectedAt, drift: [...inspection.drift], inspectionProblem: null, ...(inspection.running ? { runningNow: inspection.running } : {}) };
    await this.manifests.update({ nodeId, runId }, found);
    return this.find(nodeId);
  }
}
