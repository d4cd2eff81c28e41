import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Logger } from 'pino';
import type { NodeGroupEntity } from '@ccos/api/data-access-db';
import { type GroupInstance, AutoscalingRefusal } from './node-group-model';
import type { NodeGroups } from './node-groups';
import { CLOUD_PROVIDER_SERVICE, EXTERNALGRPC_PROTO, protoDir } from './proto-files';
import { encodeTemplateNode, templateCapacity } from './template-node';

/** The subject of a client certificate the service issued for a cluster's autoscaler. */
export const AUTOSCALER_CLIENT_PREFIX = 'cluster-autoscaler:';

/** cluster-autoscaler's InstanceErrorClass values (cloudprovider.OutOfResourcesErrorClass, OtherErrorClass). */
const ERROR_CLASS = { OUT_OF_RESOURCES: 1, OTHER: 99 } as const;
/** InstanceStatus.InstanceState in externalgrpc.proto. */
const INSTANCE_STATE = { RUNNING: 1, CREATING: 2, DELETING: 3 } as const;

/**
 * What NodeGroupGetOptions answers where the request's `defaults` (the autoscaler's flags) carry no
 * value: every field gets one, since the autoscaler takes a missing duration as zero.
 * `maxNodeProvisionSeconds` is also the least provision time ever answered.
 */
export interface AutoscalingOptions {
  readonly scaleDownUtilizationThreshold: number;
  readonly scaleDownGpuUtilizationThreshold: number;
  readonly ignoreDaemonSetsUtilization: boolean;
  readonly scaleDownUnneededSeconds: number;
  readonly scaleDownUnreadySeconds: number;
  readonly maxNodeProvisionSeconds: number;
}

/** cluster-autoscaler's own flag defaults, except the provision time. */
export const DEFAULT_AUTOSCALING_OPTIONS: AutoscalingOptions = {
  scaleDownUtilizationThreshold: 0.5,
  scaleDownGpuUtilizationThreshold: 0.5,
  ignoreDaemonSetsUtilization: false,
  scaleDownUnneededSeconds: 600,
  scaleDownUnreadySeconds: 1200,
  // An install from a spare (agent, Ignition, kubelet, CSRs) takes minutes on a real host.
  maxNodeProvisionSeconds: 1800,
};

export interface CloudProviderServerOptions {
  readonly host: string;
  readonly port: number;
  /** PEM: the CA client certificates must chain to, the server's certificate and key. */
  readonly credentials: { readonly caPem: string; readonly certPem: string; readonly keyPem: string };
  readonly options?: AutoscalingOptions;
}

export interface RunningCloudProvider {
  readonly port: number;
  close(): Promise<void>;
}

type Handler<Req, Res> = (clusterId: string, request: Req) => Promise<Res>;

interface ExternalNode {
  providerID?: string;
  name?: string;
  labels?: Record<string, string>;
}

/** google.protobuf.Duration as proto-loader hands it over (int64 seconds as a string). */
interface ProtoDuration {
  seconds: string;
  nanos: number;
}

/** NodeGroupAutoscalingOptions as decoded: an absent Duration is null. */
interface NodeGroupAutoscalingOptions {
  scaleDownUtilizationThreshold: number;
  scaleDownGpuUtilizationThreshold: number;
  zeroOrMaxNodeScaling: boolean;
  ignoreDaemonSetsUtilization: boolean;
  scaleDownUnneededDuration: ProtoDuration | null;
  scaleDownUnreadyDuration: ProtoDuration | null;
  MaxNodeProvisionDuration: ProtoDuration | null;
}

/**
 * cluster-autoscaler's externalgrpc CloudProvider over mTLS: a call is answered only when the
 * client presents a certificate issued by the service's autoscaler CA, whose subject names the
 * cluster it may act on; everything else is refused by the TLS handshake or UNAUTHENTICATED.
 * @see https://github.com/kubernetes/autoscaler/tree/master/cluster-autoscaler/cloudprovider/externalgrpc
 */
export async function startCloudProviderServer({ registry, scaling, members }: NodeGroups, logger: Logger, options: CloudProviderServerOptions): Promise<RunningCloudProvider> {
  const log = logger.child({ component: 'externalgrpc' });
  const definition = protoLoader.loadSync(`${protoDir()}${EXTERNALGRPC_PROTO}`, { keepCase: true, longs: String, enums: Number, defaults: true, oneofs: true });
  // proto-loader's definition is keyed by full names: the service's methods, paths and (de)serialisers.
  const service = definition[CLOUD_PROVIDER_SERVICE] as unknown as grpc.ServiceDefinition;
  const settings = options.options ?? DEFAULT_AUTOSCALING_OPTIONS;

  const unary = <Req, Res>(name: string, handler: Handler<Req, Res>): grpc.handleUnaryCall<Req, Res> => (call, callback) => {
    const clusterId = clusterOfCall(call);
    if (!clusterId) {
      callback({ code: grpc.status.UNAUTHENTICATED, details: 'a client certificate issued by ccos-scaler for a cluster\'s autoscaler is required' });
      return;
    }
    handler(clusterId, call.request).then(
      (response) => callback(null, response),
      (error: unknown) => {
        if (error instanceof AutoscalingRefusal) {
          log.info({ rpc: name, code: error.code, reason: error.message, reasonCode: error.text.code, reasonParams: error.text.params }, 'refused an autoscaler call');
          // The details stay English (cluster-autoscaler logs them); the code and parameters ride in the trailers for clients that word them.
          const metadata = new grpc.Metadata();
          metadata.set('ccos-message-code', error.text.code);
          metadata.set('ccos-message-params', JSON.stringify(error.text.params));
          callback({ code: grpc.status[error.code], details: error.message, metadata });
          return;
        }
        log.error({ err: error, rpc: name }, 'autoscaler call failed');
        callback({ code: grpc.status.INTERNAL, details: error instanceof Error ? error.message : String(error) });
      },
    );
  };

  const groupView = async (group: NodeGroupEntity) => ({
    id: group.name,
    minSize: group.minSize,
    maxSize: group.maxSize,
    debug: `${group.name}: target ${group.targetSize}, current ${await registry.currentSize(group)}, min ${group.minSize}, max ${group.maxSize}`,
  });
  const instanceView = (instance: GroupInstance) => ({
    id: instance.id,
    status: {
      instanceState: INSTANCE_STATE[instance.state],
      errorInfo: instance.error ? { errorCode: instance.error.code, errorMessage: instance.error.message, instanceErrorClass: ERROR_CLASS[instance.error.errorClass] } : { errorCode: '', errorMessage: '', instanceErrorClass: 0 },
    },
  });
  const unimplemented: grpc.handleUnaryCall<unknown, unknown> = (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED, details: 'pricing is not implemented: spare hosts have no price' });

  const handlers: grpc.UntypedServiceImplementation = {
    NodeGroups: unary('NodeGroups', async (clusterId) => ({ nodeGroups: await Promise.all((await registry.groupsOf(clusterId)).map(groupView)) })),
    NodeGroupForNode: unary<{ node?: ExternalNode }, unknown>('NodeGroupForNode', async (clusterId, request) => {
      const group = await registry.groupForNode(clusterId, request.node?.providerID ?? '');
      return { nodeGroup: group ? await groupView(group) : { id: '', minSize: 0, maxSize: 0, debug: '' } };
    }),
    PricingNodePrice: unimplemented,
    PricingPodPrice: unimplemented,
    GPULabel: unary('GPULabel', async () => ({ label: 'nvidia.com/gpu' })),
    GetAvailableGPUTypes: unary('GetAvailableGPUTypes', async () => ({ gpuTypes: {} })),
    Cleanup: unary('Cleanup', async () => ({})),
    Refresh: unary('Refresh', async () => {
      await members.reconcileAll();
      return {};
    }),
    NodeGroupTargetSize: unary<{ id: string }, unknown>('NodeGroupTargetSize', async (clusterId, request) => ({ targetSize: (await registry.groupByName(clusterId, request.id)).targetSize })),
    NodeGroupIncreaseSize: unary<{ id: string; delta: number }, unknown>('NodeGroupIncreaseSize', async (clusterId, request) => {
      await scaling.increaseSize(clusterId, request.id, request.delta);
      return {};
    }),
    NodeGroupDeleteNodes: unary<{ id: string; nodes: ExternalNode[] }, unknown>('NodeGroupDeleteNodes', async (clusterId, request) => {
      await scaling.deleteNodes(clusterId, request.id, request.nodes.map((node) => node.providerID ?? ''));
      return {};
    }),
    NodeGroupDecreaseTargetSize: unary<{ id: string; delta: number }, unknown>('NodeGroupDecreaseTargetSize', async (clusterId, request) => {
      await scaling.decreaseTargetSize(clusterId, request.id, request.delta);
      return {};
    }),
    NodeGroupNodes: unary<{ id: string }, unknown>('NodeGroupNodes', async (clusterId, request) => ({
      instances: (await registry.instances(await registry.groupByName(clusterId, request.id))).map(instanceView),
    })),
    NodeGroupTemplateNodeInfo: unary<{ id: string }, unknown>('NodeGroupTemplateNodeInfo', async (clusterId, request) => {
      const group = await registry.groupByName(clusterId, request.id);
      const spares = (await registry.membersOf(group.id)).filter((member) => member.state === 'SPARE');
      return { nodeBytes: encodeTemplateNode(group, new Date(), templateCapacity(group, spares.map((member) => member.node?.facts.hardware))) };
    }),
    NodeGroupGetOptions: unary<{ id: string; defaults: NodeGroupAutoscalingOptions | null }, unknown>('NodeGroupGetOptions', async (clusterId, request) => {
      await registry.groupByName(clusterId, request.id);
      return { nodeGroupAutoscalingOptions: nodeGroupOptions(request.defaults, settings) };
    }),
  };

  const server = new grpc.Server();
  server.addService(service, handlers);
  const credentials = grpc.ServerCredentials.createSsl(Buffer.from(options.credentials.caPem), [{ cert_chain: Buffer.from(options.credentials.certPem), private_key: Buffer.from(options.credentials.keyPem) }], true);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync(`${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`, credentials, (error, bound) => (error ? reject(error) : resolve(bound))));
  log.info({ port }, 'cluster-autoscaler externalgrpc provider listening (mTLS)');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), 5000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/**
 * A group's options: the autoscaler's own (its flags, sent as `defaults`), except where a pool of
 * spares needs its own: a provision time no shorter than an install takes, and one-by-one scaling.
 * @see https://github.com/kubernetes/autoscaler/blob/cluster-autoscaler-1.36.1/cluster-autoscaler/cloudprovider/externalgrpc/externalgrpc_node_group.go
 */
function nodeGroupOptions(requested: NodeGroupAutoscalingOptions | null, settings: AutoscalingOptions): NodeGroupAutoscalingOptions {
  const leastProvision = durationOf(settings.maxNodeProvisionSeconds);
  const requestedProvision = requested?.MaxNodeProvisionDuration;
  return {
    scaleDownUtilizationThreshold: requested?.scaleDownUtilizationThreshold ?? settings.scaleDownUtilizationThreshold,
    scaleDownGpuUtilizationThreshold: requested?.scaleDownGpuUtilizationThreshold ?? settings.scaleDownGpuUtilizationThreshold,
    // Spares are installed one host at a time as the autoscaler asks; all-or-nothing scaling does not fit a pool.
    zeroOrMaxNodeScaling: false,
    ignoreDaemonSetsUtilization: requested?.ignoreDaemonSetsUtilization ?? settings.ignoreDaemonSetsUtilization,
    scaleDownUnneededDuration: requested?.scaleDownUnneededDuration ?? durationOf(settings.scaleDownUnneededSeconds),
    scaleDownUnreadyDuration: requested?.scaleDownUnreadyDuration ?? durationOf(settings.scaleDownUnreadySeconds),
    MaxNodeProvisionDuration: requestedProvision && secondsOf(requestedProvision) > secondsOf(leastProvision) ? requestedProvision : leastProvision,
  };
}

function durationOf(seconds: number): ProtoDuration {
  return { seconds: String(seconds), nanos: 0 };
}

function secondsOf(duration: ProtoDuration): number {
  return Number(duration.seconds) + duration.nanos / 1e9;
}

/** The cluster the client certificate names (its CN), or null without one (the handshake already checked the chain). */
function clusterOfCall(call: grpc.ServerUnaryCall<unknown, unknown>): string | null {
  const peer = call.getAuthContext()?.sslPeerCertificate;
  const commonName = peer?.subject?.CN;
  const name = Array.isArray(commonName) ? commonName[0] : commonName;
  if (typeof name !== 'string' || !name.startsWith(AUTOSCALER_CLIENT_PREFIX)) {
    return null;
  }
  return name.slice(AUTOSCALER_CLIENT_PREFIX.length);
}
