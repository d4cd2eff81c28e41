import { randomUUID } from 'node:crypto';
import type { ClusterEntity, ClusterStore } from '@ccos/api/data-access-db';
import { ClusterAddressGuard, KubeClientConfigError, type KubeClientOptions, createKubeClient, resolveClusterHost } from '@ccos/api/data-access-kube';
import { BadUserInputError, FieldConflictError } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import type { HardwareMinimums } from '@ccos/shared/domain';
import { bare, message } from '@ccos/shared/messages';
import { CREDENTIALS_PURPOSE, type ClusterCredentials, checkKubeconfig, checkPemCertificates, kubeconfigSkipsTlsVerify } from './cluster-credentials';
import type { RegisterClusterInput } from './register-cluster.input';

/** The most installs a cluster may run at once: each holds an SSH session, an agent and a bootstrap identity while it runs. */
export const MAX_INSTALLS_AT_ONCE = 1000;

/** Told after a cluster was registered or its settings changed (the CSR auto-approver listens). */
export type ClusterChangeListener = (cluster: ClusterEntity) => void;

export class ClusterService {
  constructor(
    private readonly clusters: ClusterStore,
    private readonly secrets: SecretBox,
    private readonly onChange: ClusterChangeListener = () => undefined,
    /** Which API server addresses the service connects to (ALLOW_CLUSTER_ADDRESSES); none of loopback, link-local or metadata by default. */
    private readonly addresses: ClusterAddressGuard = new ClusterAddressGuard(),
  ) {}

  /**
   * Registers a cluster after checking that the service would connect to it as given: the
   * credentials are usable, travel over verified TLS (unless `allowInsecureTransport`), and the
   * API server's address (every address its name resolves to now) is not a refused one. A
   * refused registration stores nothing and contacts nobody. A name that does not resolve now
   * is accepted: each connection resolves it again and refuses what the policy refuses.
   */
  async register(input: RegisterClusterInput): Promise<ClusterEntity> {
    const credentials = credentialsFrom(input);
    const apiServerUrl = input.apiServerUrl.replace(/\/$/, '');
    checkTransport(input, apiServerUrl, credentials);
    // A name that does not resolve (yet) is let through: every connection resolves and checks it again.
    const host = await resolveClusterHost(apiServerUrl, this.addresses);
    if (!host.ok && host.kind === 'refused') {
      throw new BadUserInputError('input.apiServerUrl', host.coded);
    }
    checkClientAccepts({ apiServerUrl, credentials, allowInsecureTransport: input.allowInsecureTransport, addresses: this.addresses });
    if (await this.clusters.existsNamed(input.name)) {
      throw duplicateName(input.name);
    }
    const saved = await this.clusters.insert({
      id: randomUUID(),
      name: input.name,
      apiServerUrl,
      vip: input.vip,
      allowInsecureTransport: input.allowInsecureTransport,
      credentialsSealed: this.secrets.sealJson(credentials, CREDENTIALS_PURPOSE),
      credentialKind: credentials.kind,
      csrAutoApprove: input.csrAutoApprove,
      autoApproveRenewals: input.autoApproveRenewals ?? true,
      bootstrapStyle: input.bootstrapStyle,
      machineConfigCaCert: input.machineConfigCaCert ?? null,
    });
    // Null: two registrations of one name raced past the check above.
    if (!saved) {
      throw duplicateName(input.name);
    }
    this.onChange(saved);
    return saved;
  }

  list(): Promise<ClusterEntity[]> {
    return this.clusters.list();
  }

  get(id: string): Promise<ClusterEntity> {
    return this.clusters.get(id);
  }

  /** Sets join auto-approve, renewal auto-approve, or both; an absent switch keeps its value. */
  async setCsrAutoApprove(id: string, switches: { readonly enabled?: boolean | null; readonly renewals?: boolean | null }): Promise<ClusterEntity> {
    if ((switches.enabled ?? null) === null && (switches.renewals ?? null) === null) {
      throw new BadUserInputError('enabled', message('cluster.autoApproveNothing'));
    }
    const cluster = await this.get(id);
    cluster.csrAutoApprove = switches.enabled ?? cluster.csrAutoApprove;
    cluster.autoApproveRenewals = switches.renewals ?? cluster.autoApproveRenewals;
    const saved = await this.clusters.save(cluster);
    this.onChange(saved);
    return saved;
  }

  /** What every host added to the cluster must have at least; null (or all zero) asks nothing. */
  async setHostMinimums(id: string, minimums: HardwareMinimums | null): Promise<ClusterEntity> {
    const cluster = await this.get(id);
    const labelKeys = [...new Set(minimums?.labelKeys ?? [])];
    const asks = minimums !== null && (minimums.cpus > 0 || minimums.memoryBytes > 0 || (minimums.diskBytes ?? 0) > 0 || labelKeys.length > 0);
    cluster.hostMinimums = asks ? { cpus: minimums.cpus, memoryBytes: minimums.memoryBytes, diskBytes: minimums.diskBytes ?? 0, labelKeys } : null;
    return this.clusters.save(cluster);
  }

  /** How many installs run at once on the cluster (1–1,000); the rest wait their turn. Raising it starts waiting installs at once. */
  async setInstallsAtOnce(id: string, limit: number): Promise<ClusterEntity> {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_INSTALLS_AT_ONCE) {
      throw new BadUserInputError('limit', message('cluster.installsAtOnceRange', { max: MAX_INSTALLS_AT_ONCE }));
    }
    const cluster = await this.get(id);
    cluster.installsAtOnce = limit;
    const saved = await this.clusters.save(cluster);
    this.onChange(saved);
    return saved;
  }

  /** Four-eyes on or off: whether irreversible and safety-passing actions on the cluster wait for a second person. */
  async setFourEyes(id: string, enabled: boolean): Promise<ClusterEntity> {
    const cluster = await this.get(id);
    cluster.fourEyes = enabled;
    return this.clusters.save(cluster);
  }

  /** Which release's artifact set the cluster's installs use instead of the one it reports; null follows the cluster. */
  async setArtifactVersion(id: string, version: string | null): Promise<ClusterEntity> {
    const cluster = await this.get(id);
    cluster.artifactVersion = version;
    return this.clusters.save(cluster);
  }

  /** Keeps which readiness checks failed just now (none: the cluster is ready for installs). */
  recordReadiness(id: string, failing: readonly string[]): Promise<void> {
    return this.clusters.recordReadiness(id, failing, new Date());
  }

  /** The decrypted credentials, for the Kubernetes client only. */
  credentialsOf(cluster: ClusterEntity): ClusterCredentials {
    return this.secrets.openJson<ClusterCredentials>(cluster.credentialsSealed, CREDENTIALS_PURPOSE);
  }

  /** Everything {@link createKubeClient} needs to reach the cluster as registered, address checks included. */
  clientOptionsOf(cluster: ClusterEntity): KubeClientOptions {
    return { apiServerUrl: cluster.apiServerUrl, credentials: this.credentialsOf(cluster), allowInsecureTransport: cluster.allowInsecureTransport, addresses: this.addresses };
  }
}

const INSECURE_OPT_IN = bare(message('cluster.insecureOptIn'));

/** Plain HTTP and unverified TLS only when the registration asks for them by name. */
function checkTransport(input: RegisterClusterInput, apiServerUrl: string, credentials: ClusterCredentials): void {
  if (input.allowInsecureTransport) {
    return;
  }
  if (apiServerUrl.startsWith('http://')) {
    throw new BadUserInputError('input.apiServerUrl', message('cluster.plainHttp', { optIn: INSECURE_OPT_IN }));
  }
  if (credentials.kind === 'KUBECONFIG' && kubeconfigSkipsTlsVerify(credentials.kubeconfig)) {
    throw new BadUserInputError('input.kubeconfig', message('cluster.skipTlsVerify', { optIn: INSECURE_OPT_IN }));
  }
}

/** What the Kubernetes client would refuse when connecting is refused now, before anything is stored. */
function checkClientAccepts(options: KubeClientOptions): void {
  try {
    createKubeClient(options).close();
  } catch (error) {
    if (error instanceof KubeClientConfigError) {
      throw new BadUserInputError(options.credentials.kind === 'TOKEN' ? 'input.token' : 'input.kubeconfig', message('cluster.credentialsUnusable', { error: error.message }));
    }
    throw error;
  }
}

function credentialsFrom(input: RegisterClusterInput): ClusterCredentials {
  if (input.kubeconfig && input.token) {
    throw new BadUserInputError('input.token', message('cluster.tokenAndKubeconfig'));
  }
  if (input.kubeconfig) {
    const problem = checkKubeconfig(input.kubeconfig);
    if (problem) {
      throw new BadUserInputError('input.kubeconfig', problem);
    }
    return { kind: 'KUBECONFIG', kubeconfig: input.kubeconfig };
  }
  if (input.token) {
    if (/\s/.test(input.token.trim())) {
      throw new BadUserInputError('input.token', message('cluster.tokenSpaces'));
    }
    const caProblem = input.caCert ? checkPemCertificates(input.caCert) : null;
    if (caProblem) {
      throw new BadUserInputError('input.caCert', caProblem);
    }
    return { kind: 'TOKEN', token: input.token.trim(), caCert: input.caCert ?? null };
  }
  throw new BadUserInputError('input.kubeconfig', message('cluster.credentialsMissing'));
}

function duplicateName(name: string): FieldConflictError {
  return new FieldConflictError('input.name', message('cluster.nameTaken', { name }));
}
