import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Where the service's externalgrpc.proto and the v1.Node subset are: the test client is built from the same files. */
export const PROTO_DIR = 'libs/api/feature-autoscaling/proto/';

type Unary = (request: Record<string, unknown>, callback: (error: grpc.ServiceError | null, response: Record<string, unknown>) => void) => void;
export type CloudProviderClient = grpc.Client & Record<string, Unary>;

/** cluster-autoscaler's CloudProvider client, generated at run time from externalgrpc.proto. */
export function cloudProviderClientConstructor(): grpc.ServiceClientConstructor {
  const definition = protoLoader.loadSync(`${PROTO_DIR}externalgrpc.proto`, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as { clusterautoscaler: { cloudprovider: { v1: { externalgrpc: { CloudProvider: grpc.ServiceClientConstructor } } } } };
  return loaded.clusterautoscaler.cloudprovider.v1.externalgrpc.CloudProvider;
}

/** A client with the autoscaler's files (CA, client certificate and key), as the cloud-config names them. */
export function cloudProviderClient(address: string, files: { ca: Buffer | string; cert?: Buffer | string; key?: Buffer | string }): CloudProviderClient {
  const CloudProvider = cloudProviderClientConstructor();
  const credentials = files.cert && files.key ? grpc.credentials.createSsl(Buffer.from(files.ca), Buffer.from(files.key), Buffer.from(files.cert)) : grpc.credentials.createSsl(Buffer.from(files.ca));
  return new CloudProvider(address, credentials) as unknown as CloudProviderClient;
}

/** One unary call with a 15 s deadline, as a promise. */
export function callProvider<T = Record<string, unknown>>(client: CloudProviderClient, rpc: string, message: Record<string, unknown> = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const deadline = new Date(Date.now() + 15_000);
    (client[rpc] as unknown as (m: unknown, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: unknown) => void) => void).call(
      client, message, new grpc.Metadata(), { deadline }, (error, response) => (error ? reject(error) : resolve(response as T)),
    );
  });
}
