import { randomUUID } from 'node:crypto';
import type { DataSource, Repository } from 'typeorm';
import { ClusterEntity, isUuid, uniqueViolationOf } from '@ccos/api/data-access-db';
import { BadUserInputError, ConflictError, NotFoundError } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import { CREDENTIALS_PURPOSE, type ClusterCredentials, checkKubeconfig, checkPem } from './cluster-credentials';
import type { RegisterClusterInput } from './register-cluster.input';


/** Told after a cluster was registered or its settings changed (the CSR auto-approver listens). */
export type ClusterChangeListener = (cluster: ClusterEntity) => void;

export class ClusterService {
  private readonly clusters: Repository<ClusterEntity>;

  constructor(
    dataSource: DataSource,
    private readonly secrets: SecretBox,
    private readonly onChange: ClusterChangeListener = () => undefined,
  ) {
    this.clusters = dataSource.getRepository(ClusterEntity);
  }

  async register(input: RegisterClusterInput): Promise<ClusterEntity> {
    const credentials = credentialsFrom(input);
    if (await this.clusters.existsBy({ name: input.name })) {
      throw duplicateName(input.name);
    }
    const cluster = this.clusters.create({
      id: randomUUID(),
      name: input.name,
      apiServerUrl: input.apiServerUrl.replace(/\/$/, ''),
      vip: input.vip,
      credentialsSealed: this.secrets.sealJson(credentials, CREDENTIALS_PURPOSE),
      credentialKind: credentials.kind,
      csrAutoApprove: input.csrAutoApprove,
      bootstrapStyle: input.bootstrapStyle,
      machineConfigCaCert: input.machineConfigCaCert ?? null,
    });
    try {
      const saved = await this.clusters.save(cluster);
      this.onChange(saved);
      return saved;
    } catch (error) {
      // Two registrations of one name raced past the check above.
      if (uniqueViolationOf(error)) {
        throw duplicateName(input.name);
      }
      throw error;
    }
  }

  list(): Promise<ClusterEntity[]> {
    return this.clusters.find({ order: { name: 'ASC' } });
  }

  async get(id: string): Promise<ClusterEntity> {
    const cluster = isUuid(id) ? await this.clusters.findOneBy({ id }) : null;
    if (!cluster) {
      throw new NotFoundError('cluster', id);
    }
    return cluster;
  }

  async setCsrAutoApprove(id: string, enabled: boolean): Promise<ClusterEntity> {
    const cluster = await this.get(id);
    cluster.csrAutoApprove = enabled;
    const saved = await this.clusters.save(cluster);
    this.onChange(saved);
    return saved;
  }

  /** The decrypted credentials, for the Kubernetes client only. */
  credentialsOf(cluster: ClusterEntity): ClusterCredentials {
    return this.secrets.openJson<ClusterCredentials>(cluster.credentialsSealed, CREDENTIALS_PURPOSE);
  }
}

function credentialsFrom(input: RegisterClusterInput): ClusterCredentials {
  if (input.kubeconfig && input.token) {
    throw new BadUserInputError('input.token', 'must not be given together with input.kubeconfig; choose one');
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
      throw new BadUserInputError('input.token', 'must be a single bearer token without spaces');
    }
    const caProblem = input.caCert ? checkPem(input.caCert, 'CERTIFICATE') : null;
    if (caProblem) {
      throw new BadUserInputError('input.caCert', caProblem);
    }
    return { kind: 'TOKEN', token: input.token.trim(), caCert: input.caCert ?? null };
  }
  throw new BadUserInputError('input.kubeconfig', 'or input.token is required: the service needs credentials for the cluster');
}

function duplicateName(name: string): ConflictError {
  return new ConflictError(`input.name "${name}" is already registered; choose another name`, { field: 'input.name' });
}
