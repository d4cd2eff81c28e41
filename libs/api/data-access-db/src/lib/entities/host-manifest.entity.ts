import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { FileDrift, ManifestFile, RunningKubelet } from '@ccos/shared/domain';
import type { CodedText } from '@ccos/shared/messages';

/** What a node's host runs by its last successful install, and what its last inspection found. */
@Entity({ name: 'host_manifests' })
export class HostManifestEntity {
  @PrimaryColumn({ name: 'node_id', type: 'uuid' })
  nodeId!: string;

  /** The install run that wrote the files. */
  @Column({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @Column({ name: 'recorded_at', type: 'timestamptz' })
  recordedAt!: Date;

  /** The artifact set's version as the agent's manifest named it. */
  @Column({ name: 'artifact_set_version', type: 'text', nullable: true })
  artifactSetVersion!: string | null;

  /** SHA-256 of the exact artifact manifest the run was launched with: what "the cluster's set now" is compared with. */
  @Column({ name: 'artifact_manifest_sha256', type: 'text', nullable: true })
  artifactManifestSha256!: string | null;

  @Column({ type: 'jsonb' })
  files!: ManifestFile[];

  /** The kernel and the running kubelet (version, arguments with secrets hidden) once the node was Ready; null when the agent did not say (an older agent). */
  @Column({ name: 'running_at_install', type: 'jsonb', nullable: true })
  runningAtInstall!: RunningKubelet | null;

  /** The kernel and kubelet the last inspection that reached the host found running; null before one. */
  @Column({ name: 'running_now', type: 'jsonb', nullable: true })
  runningNow!: RunningKubelet | null;

  @Column({ name: 'inspected_at', type: 'timestamptz', nullable: true })
  inspectedAt!: Date | null;

  /** Files the last inspection found changed or gone; empty when all were as recorded (or none was inspected). */
  @Column({ type: 'jsonb', default: () => "'[]'::jsonb" })
  drift!: FileDrift[];

  /** Why the last inspection could not look at the host (unreachable, refused credentials); null when it did. */
  @Column({ name: 'inspection_problem', type: 'jsonb', nullable: true })
  inspectionProblem!: CodedText | null;
}
