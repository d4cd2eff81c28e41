import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { FileDrift, ManifestFile } from '@ccos/shared/domain';
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

  /** `uname -r` once the node was Ready; null when the agent did not say (an older agent). */
  @Column({ name: 'kernel_release', type: 'text', nullable: true })
  kernelRelease!: string | null;

  @Column({ name: 'kubelet_version', type: 'text', nullable: true })
  kubeletVersion!: string | null;

  /** The running kubelet's arguments, secrets hidden; null when the agent did not say. */
  @Column({ name: 'kubelet_flags', type: 'jsonb', nullable: true })
  kubeletFlags!: string[] | null;

  @Column({ name: 'inspected_at', type: 'timestamptz', nullable: true })
  inspectedAt!: Date | null;

  /** Files the last inspection found changed or gone; empty when all were as recorded (or none was inspected). */
  @Column({ type: 'jsonb', default: () => "'[]'::jsonb" })
  drift!: FileDrift[];

  /** Why the last inspection could not look at the host (unreachable, refused credentials); null when it did. */
  @Column({ name: 'inspection_problem', type: 'jsonb', nullable: true })
  inspectionProblem!: CodedText | null;
}
