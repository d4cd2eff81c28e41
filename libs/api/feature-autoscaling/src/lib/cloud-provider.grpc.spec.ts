// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect polyfill first.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as x509 from '@peculiar/x509';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeGroupEntity } from '@ccos/api/data-access-db';
import { message } from '@ccos/shared/messages';
import { AUTOSCALER_CLIENT_PREFIX, type RunningCloudProvider, startCloudProviderServer } from './cloud-provider.grpc';
import { AutoscalingRefusal } from './node-group-model';
import type { NodeGroups } from './node-groups';
import { EXTERNALGRPC_PROTO, protoDir } from './proto-files';
import { v1NodeType } from './template-node';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const CLUSTER = 'c1';
const GROUP = {
  id: '6a1d1c4e-0000-4000-8000-000000000001',
  name: 'pool-a',
  minSize: 0,
  maxSize: 3,
  targetSize: 0,
  labels: [{ key: 'pool', value: 'a' }],
  taints: [],
  profile: { cpuCores: 2, memoryBytes: 4 * 1024 ** 3, ephemeralStorageBytes: 20 * 1024 ** 3, maxPods: 110, arch: 'amd64' },
} as unknown as NodeGroupEntity;

/** One group in one cluster; what the gRPC layer asks of the node groups for the calls below. */
const groups = {
  registry: {
    groupByName: async (clusterId: string, name: string) => {
      if (clusterId !== CLUSTER || name !== GROUP.name) {
        throw new AutoscalingRefusal('NOT_FOUND', message('autoscaling.refusal.groupNotFound', { name }));
      }
      return GROUP;
    },
    // Two ready spares as their hosts reported them, and one that is not ready (its hardware does not count).
    membersOf: async () => [
      { state: 'SPARE', node: { facts: { hardware: { cpus: 8, memoryBytes: 31 * 1024 ** 3 } } } },
      { state: 'SPARE', node: { facts: { hardware: { cpus: 4, memoryBytes: 62 * 1024 ** 3 } } } },
      { state: 'UNUSABLE', node: { facts: { hardware: { cpus: 1, memoryBytes: 1024 ** 3 } } } },
    ],
  },
  members: { reconcileAll: async () => undefined },
} as unknown as NodeGroups;

interface Pem {
  readonly certPem: string;
  readonly keyPem: string;
}

async function certificate(commonName: string, usage: 'ca' | x509.ExtendedKeyUsageType, issuer?: Pem): Promise<Pem> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const signingKey = issuer ? await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(issuer.keyPem), ALGORITHM, false, ['sign']) : keys.privateKey;
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial.toString('hex'),
    subject: `CN=${commonName}`,
    issuer: issuer ? new x509.X509Certificate(issuer.certPem).subject : `CN=${commonName}`,
    notBefore: new Date(Date.now() - 3600_000),
    notAfter: new Date(Date.now() + 24 * 3600_000),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey,
    extensions:
      usage === 'ca'
        ? [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true)]
        : [
            new x509.BasicConstraintsExtension(false, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
            new x509.ExtendedKeyUsageExtension([usage]),
            new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'localhost' }]),
          ],
  });
  return { certPem: cert.toString('pem'), keyPem: x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY') };
}

type Callback = (error: grpc.ServiceError | null, response: unknown) => void;
type CloudProviderClient = grpc.Client & Record<string, (request: unknown, callback: Callback) => void>;

function call<T>(client: CloudProviderClient, rpc: string, request: Record<string, unknown> = {}): Promise<T> {
  return new Promise((resolve, reject) => client[rpc]?.call(client, request, (error: grpc.ServiceError | null, response: unknown) => (error ? reject(error) : resolve(response as T))));
}

const seconds = (value: number) => ({ seconds: String(value), nanos: 0 });

describe('externalgrpc CloudProvider over the wire (cluster-autoscaler 1.36.1 contract)', () => {
  let server: RunningCloudProvider;
  let client: CloudProviderClient;

  beforeAll(async () => {
    const ca = await certificate('autoscaler-grpc test CA', 'ca');
    const serverCert = await certificate('localhost', x509.ExtendedKeyUsage.serverAuth, ca);
    const clientCert = await certificate(`${AUTOSCALER_CLIENT_PREFIX}${CLUSTER}`, x509.ExtendedKeyUsage.clientAuth, ca);
    server = await startCloudProviderServer(groups, pino({ level: 'silent' }), { host: '127.0.0.1', port: 0, credentials: { caPem: ca.certPem, ...serverCert } });
    // A client built from the same .proto, as the autoscaler's generated Go client is.
    const definition = protoLoader.loadSync(`${protoDir()}${EXTERNALGRPC_PROTO}`, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as { clusterautoscaler: { cloudprovider: { v1: { externalgrpc: { CloudProvider: grpc.ServiceClientConstructor } } } } };
    const CloudProvider = loaded.clusterautoscaler.cloudprovider.v1.externalgrpc.CloudProvider;
    const credentials = grpc.credentials.createSsl(Buffer.from(ca.certPem), Buffer.from(clientCert.keyPem), Buffer.from(clientCert.certPem));
    client = new CloudProvider(`127.0.0.1:${server.port}`, credentials, { 'grpc.ssl_target_name_override': 'localhost' }) as unknown as CloudProviderClient;
  });
  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  describe('NodeGroupGetOptions: the autoscaler\'s flags, except a pool\'s provision time and one-by-one scaling', () => {
    // What cluster-autoscaler 1.36's GetOptions sends: every field, its flags (here none at their stock values).
    const flags = {
      scaleDownUtilizationThreshold: 0.65,
      scaleDownGpuUtilizationThreshold: 0.4,
      zeroOrMaxNodeScaling: true,
      ignoreDaemonSetsUtilization: true,
      scaleDownUnneededDuration: seconds(1234),
      scaleDownUnreadyDuration: { seconds: '2345', nanos: 500_000_000 },
      MaxNodeProvisionDuration: seconds(900),
    };
    it.each([
      [
        'the flags, a provision time shorter than an install raised to 30 min',
        flags,
        { ...flags, zeroOrMaxNodeScaling: false, MaxNodeProvisionDuration: seconds(1800) },
      ],
      ['a provision time longer than 30 min kept', { ...flags, MaxNodeProvisionDuration: seconds(3600) }, { ...flags, zeroOrMaxNodeScaling: false, MaxNodeProvisionDuration: seconds(3600) }],
      [
        'no defaults: cluster-autoscaler\'s stock values, 30 min to provision',
        undefined,
        {
          scaleDownUtilizationThreshold: 0.5,
          scaleDownGpuUtilizationThreshold: 0.5,
          zeroOrMaxNodeScaling: false,
          ignoreDaemonSetsUtilization: false,
          scaleDownUnneededDuration: seconds(600),
          scaleDownUnreadyDuration: seconds(1200),
          MaxNodeProvisionDuration: seconds(1800),
        },
      ],
      [
        'durations only in the fields a client before 1.34.2 used (unknown here): the thresholds kept, durations filled',
        { scaleDownUtilizationThreshold: 0.7, scaleDownGpuUtilizationThreshold: 0.6 },
        {
          scaleDownUtilizationThreshold: 0.7,
          scaleDownGpuUtilizationThreshold: 0.6,
          zeroOrMaxNodeScaling: false,
          ignoreDaemonSetsUtilization: false,
          scaleDownUnneededDuration: seconds(600),
          scaleDownUnreadyDuration: seconds(1200),
          MaxNodeProvisionDuration: seconds(1800),
        },
      ],
    ])('%s', async (_case, defaults, answered) => {
      const answer = await call<{ nodeGroupAutoscalingOptions: unknown }>(client, 'NodeGroupGetOptions', { id: GROUP.name, defaults });
      expect(answer.nodeGroupAutoscalingOptions).toEqual(answered);
    });

    it('refuses an unknown group with NOT_FOUND and its message code', async () => {
      const error = (await call(client, 'NodeGroupGetOptions', { id: 'pool-x', defaults: flags }).catch((thrown: unknown) => thrown)) as grpc.ServiceError;
      expect(error.code).toBe(grpc.status.NOT_FOUND);
      expect(error.details).toBe('node group "pool-x" not found');
      expect(error.metadata.get('ccos-message-code')).toEqual(['autoscaling.refusal.groupNotFound']);
    });
  });

  it('answers NodeGroupTemplateNodeInfo in nodeBytes, a v1.Node the autoscaler unmarshals', async () => {
    const answer = await call<{ nodeBytes: Buffer }>(client, 'NodeGroupTemplateNodeInfo', { id: GROUP.name });
    const type = v1NodeType();
    const node = type.toObject(type.decode(answer.nodeBytes)) as { metadata: { name: string; labels: Record<string, string> }; status: { allocatable: Record<string, { string: string }> } };
    expect(node.metadata).toMatchObject({ name: 'template-node-for-pool-a', labels: { pool: 'a', 'kubernetes.io/arch': 'amd64' } });
    // The smallest of the ready spares, not the profile's 2 CPUs and 4 GiB.
    expect(node.status.allocatable).toMatchObject({ cpu: { string: '4' }, memory: { string: String(31 * 1024 ** 3) } });
  });

  it.each([
    ['PricingNodePrice', { node: { providerID: 'ccos://lab/n1', name: 'w1' }, startTimestamp: seconds(0), endTimestamp: seconds(3600) }],
    ['PricingPodPrice', { pod_bytes: Buffer.from([0x0a, 0x00]), startTimestamp: seconds(0), endTimestamp: seconds(3600) }],
  ])('answers %s UNIMPLEMENTED, which the autoscaler takes as ErrNotImplemented', async (rpc, request) => {
    await expect(call(client, rpc, request)).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED });
  });

  it.each([
    ['GPULabel', { label: 'nvidia.com/gpu' }],
    ['GetAvailableGPUTypes', { gpuTypes: {} }],
    ['Cleanup', {}],
    ['Refresh', {}],
  ])('answers %s', async (rpc, answered) => {
    expect(await call(client, rpc)).toEqual(answered);
  });
});
