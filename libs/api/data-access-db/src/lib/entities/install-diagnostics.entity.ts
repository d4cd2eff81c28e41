import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** The agent's diagnostics bundle (tar.gz) for a failed run. */
@Entity({ name: 'install_diagnostics' })
export class InstallDiagnosticsEntity {
  @PrimaryColumn({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @Column({ type: 'bytea' })
  content!: Buffer;

  @Column({ type: 'integer' })
  size!: number;

  @CreateDateColumn({ name: 'uploaded_at', type: 'timestamptz' })
  uploadedAt!: Date;
}
