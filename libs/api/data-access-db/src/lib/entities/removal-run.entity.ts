import { Column, Entity } from 'typeorm';
import type { RemovalOptions, RemovalPhase, RemovalRunStatus } from '@ccos/shared/domain';
import type { Message } from '@ccos/shared/messages';
import { RunColumns } from './run-columns';

/** A pod a drain could not get rid of, kept on a failed run and named in the node's status reason. */
export interface RemovalBlockingPod {
  pod: string;
  /** The PodDisruptionBudget that refused its eviction, if one did. */
  pdb?: string;
  message: string;
  /** `message` by its code in the message catalogue (absent on runs from before codes). */
  messageCoded?: Message;
}

/** An operator's decision about a run, with who took it, why and when (going on without the host, forcing the drain). */
export interface RemovalDecision {
  readonly actor: string;
  readonly reason: string;
  /** ISO time of the decision. */
  readonly at: string;
}

/**
 * One removal of a node (cordon, drain, stop the kubelet, delete the Node, ...). At most one
 * run per node is RUNNING (a partial unique index); its `removal.run` job executes it, one worker
 * at a time, and a worker that died has its job given to another (the job engine).
 */
@Entity({ name: 'removal_runs' })
export class RemovalRunEntity extends RunColumns<RemovalRunStatus> {
  @Column({ name: 'cluster_id', type: 'uuid' })
  clusterId!: string;

  /** The Node object's name. */
  @Column({ name: 'node_name', type: 'text' })
  nodeName!: string;

  /** The Node's UID when the run started: only that Node is deleted (a re-registered one is not). */
  @Column({ name: 'node_uid', type: 'text', nullable: true })
  nodeUid!: string | null;

  /** Where the run is (or stopped). */
  @Column({ type: 'text' })
  phase!: RemovalPhase;

  @Column({ type: 'jsonb' })
  options!: RemovalOptions;

  /** Pods still on the node when the drain failed. */
  @Column({ type: 'jsonb', default: () => "'[]'" })
  blocking!: RemovalBlockingPod[];

  /** The process executing the run (`host#pid`), or that last did; null until its job first runs. */
  @Column({ type: 'text', nullable: true })
  owner!: string | null;

  /** When the executor last read the operators' requests (cancel, skip the host, force the drain). */
  @Column({ name: 'heartbeat_at', type: 'timestamptz', nullable: true })
  heartbeatAt!: Date | null;

  /** What the run waits for now (a host that does not answer, a PodDisruptionBudget), coded; null while nothing holds it. */
  @Column({ type: 'jsonb', nullable: true })
  blocker!: Message | null;

  /** Since when that blocker holds the run. */
  @Column({ name: 'blocker_since', type: 'timestamptz', nullable: true })
  blockerSince!: Date | null;

  /** Set once an operator asked the run to go on without its host. */
  @Column({ name: 'skip_host', type: 'jsonb', nullable: true })
  skipHost!: RemovalDecision | null;

  /** Set once an ADMIN had the drain go past the PodDisruptionBudgets that hold it. */
  @Column({ name: 'force_drain', type: 'jsonb', nullable: true })
  forceDrain!: RemovalDecision | null;
}
