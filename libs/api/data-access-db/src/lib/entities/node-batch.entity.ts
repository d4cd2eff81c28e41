import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** The hosts of one bulk add (their nodes point here) and how their install is to run. */
@Entity({ name: 'node_batches' })
export class NodeBatchEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'cluster_id', type: 'uuid' })
  clusterId!: string;

  @Column({ name: 'created_by', type: 'text' })
  createdBy!: string;

  /** How the hosts were given: LIST (pasted or uploaded text), RANGE or ROWS. */
  @Column({ type: 'text' })
  source!: 'LIST' | 'RANGE' | 'ROWS' | 'AUTOSCALER' | 'INVENTORY';

  /** Installs at once when the batch is installed. */
  @Column({ type: 'integer', default: 10 })
  concurrency!: number;

  @Column({ name: 'install_requested_by', type: 'text', nullable: true })
  installRequestedBy!: string | null;

  @Column({ name: 'install_requested_at', type: 'timestamptz', nullable: true })
  installRequestedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
