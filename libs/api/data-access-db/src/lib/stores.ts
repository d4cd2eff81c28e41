import type { DataSource } from 'typeorm';
import { AgentTokens } from './agent-tokens';
import { ApprovalStore } from './approval.store';
import { ClusterStore } from './cluster.store';
import { CsrDecisionStore } from './csr-decision.store';
import { CsrInventory } from './csr-inventory';
import { HostManifestStore } from './host-manifest.store';
import { InstallRunNotices } from './install-run-notices';
import { InstallRunStore } from './install-run.store';
import { type LoginLimitStore, loginLimitStore } from './login-limit.store';
import { NodeBatchStore } from './node-batch.store';
import { NodeGroupStore } from './node-group.store';
import { type NodeChangeListener, NodeStore } from './node.store';
import { RemovalRunStore } from './removal-run.store';
import { RolloutStore } from './rollout.store';
import { ServiceCaStore } from './service-ca.store';
import { UserSessionStore } from './user-session.store';
import { UserStore } from './user.store';
import { WebhookStore } from './webhook.store';

/** One store per aggregate, on one database: what features get instead of the database itself. */
export interface Stores {
  readonly users: UserStore;
  readonly sessions: UserSessionStore;
  readonly loginLimits: LoginLimitStore;
  readonly clusters: ClusterStore;
  readonly nodes: NodeStore;
  readonly nodeBatches: NodeBatchStore;
  readonly webhooks: WebhookStore;
  readonly approvals: ApprovalStore;
  readonly installRuns: InstallRunStore;
  readonly agentTokens: AgentTokens;
  readonly installRunNotices: InstallRunNotices;
  readonly hostManifests: HostManifestStore;
  readonly csrDecisions: CsrDecisionStore;
  readonly csrInventory: CsrInventory;
  readonly removalRuns: RemovalRunStore;
  readonly rollouts: RolloutStore;
  readonly nodeGroups: NodeGroupStore;
  readonly serviceCas: ServiceCaStore;
}

/** The stores of an open database; `onNodeChanged` hears of every node record the node store changes. */
export function createStores(dataSource: DataSource, options: { readonly onNodeChanged: NodeChangeListener }): Stores {
  return {
    users: new UserStore(dataSource),
    sessions: new UserSessionStore(dataSource),
    loginLimits: loginLimitStore(dataSource),
    clusters: new ClusterStore(dataSource),
    nodes: new NodeStore(dataSource, options.onNodeChanged),
    nodeBatches: new NodeBatchStore(dataSource),
    webhooks: new WebhookStore(dataSource),
    approvals: new ApprovalStore(dataSource),
    installRuns: new InstallRunStore(dataSource),
    agentTokens: new AgentTokens(dataSource),
    installRunNotices: new InstallRunNotices(dataSource),
    hostManifests: new HostManifestStore(dataSource),
    csrDecisions: new CsrDecisionStore(dataSource),
    csrInventory: new CsrInventory(dataSource),
    removalRuns: new RemovalRunStore(dataSource),
    rollouts: new RolloutStore(dataSource),
    nodeGroups: new NodeGroupStore(dataSource),
    serviceCas: new ServiceCaStore(dataSource),
  };
}
