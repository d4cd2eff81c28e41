import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { Message } from '@ccos/shared/messages';

export type CsrDecisionKind = 'APPROVED' | 'DENIED' | 'LEFT_PENDING';

export interface CsrCheckRecord {
  name: string;
  passed: boolean;
  detail: string;
  /** `detail` by its message code and parameters (absent in records from before codes). */
  detailCode?: string;
  detailParams?: object;
  /** Whether force could go past it (absent in records from before forced approvals were bounded). */
  overridable?: boolean;
}

@Entity({ name: 'csr_decisions' })
export class CsrDecisionEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'cluster_id', type: 'uuid' })
  clusterId!: string;

  @Column({ name: 'csr_name', type: 'text' })
  csrName!: string;

  @Column({ name: 'node_id', type: 'uuid', nullable: true })
  nodeId!: string | null;

  @Column({ type: 'text' })
  decision!: CsrDecisionKind;

  /** A user name, or `auto-approver`. */
  @Column({ type: 'text' })
  actor!: string;

  @Column({ type: 'text' })
  reason!: string;

  /** `reason` by its message code and parameters (libs/shared/messages); null for an operator's own words and rows from before codes. */
  @Column({ name: 'reason_coded', type: 'jsonb', nullable: true })
  reasonCoded!: Message | null;

  /** An operator approved although the policy would not have: recorded so it stands out in reviews. */
  @Column({ type: 'boolean', default: false })
  forced!: boolean;

  /** The ADMIN's written reason for forcing an approval past the policy. */
  @Column({ name: 'force_reason', type: 'text', nullable: true })
  forceReason!: string | null;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  checks!: CsrCheckRecord[];

  @CreateDateColumn({ name: 'decided_at', type: 'timestamptz' })
  decidedAt!: Date;
}
