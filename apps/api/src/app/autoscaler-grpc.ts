import type { ServiceCaStore } from '@ccos/api/data-access-db';
import { AUTOSCALER_CLIENT_PREFIX, type AutoscalerConnections, type CloudProviderServerOptions } from '@ccos/api/feature-autoscaling';
import type { SecretBox } from '@ccos/api/util-secrets';
import type { ApiConfig } from './config';
import { issueClientCertificate, issueServerCertificate } from './tls/certificates';
import { serverNames } from './tls/server-names';
import { loadOrCreateServiceCa } from './tls/service-ca.store';

/** Where the Deployment in deploy/ mounts the autoscaler's Secret (tls.crt, tls.key, ca.crt). */
const MOUNT = '/etc/cluster-autoscaler/externalgrpc';
const SERVER_CERTIFICATE_DAYS = 365;
const CLIENT_CERTIFICATE_DAYS = 365;

type GrpcConfig = Pick<ApiConfig, 'host' | 'agentApiUrl' | 'autoscalerGrpc'>;

/**
 * The externalgrpc provider's server certificate, issued at start from the service's autoscaler
 * CA (its own, apart from the agent channel's) for this machine's names and AUTOSCALER_GRPC_ADDRESS's
 * host; client certificates must chain to the same CA.
 */
export async function autoscalerServerCredentials(cas: ServiceCaStore, secrets: SecretBox, config: GrpcConfig): Promise<CloudProviderServerOptions> {
  const grpc = required(config);
  const ca = await loadOrCreateServiceCa(cas, secrets, 'autoscaler-grpc');
  const names = serverNames(config);
  if (grpc.address) {
    names.push(hostOf(grpc.address));
  }
  const server = await issueServerCertificate(ca, names, SERVER_CERTIFICATE_DAYS);
  return { host: grpc.host, port: grpc.port, credentials: { caPem: ca.certPem, certPem: server.certPem, keyPem: server.keyPem } };
}

/** Issues a cluster's autoscaler a client certificate (CN=cluster-autoscaler:<cluster id>) and writes its cloud-config. */
export function autoscalerConnections(cas: ServiceCaStore, secrets: SecretBox, config: GrpcConfig, boundPort: () => number | null): AutoscalerConnections {
  return {
    issue(clusterId) {
      const grpc = config.autoscalerGrpc;
      const port = boundPort();
      if (!grpc || port === null) {
        return null;
      }
      return (async () => {
        const ca = await loadOrCreateServiceCa(cas, secrets, 'autoscaler-grpc');
        const client = await issueClientCertificate(ca, `${AUTOSCALER_CLIENT_PREFIX}${clusterId}`, CLIENT_CERTIFICATE_DAYS);
        const address = grpc.address ?? `${grpc.host === '0.0.0.0' || grpc.host === '::' ? 'localhost' : grpc.host}:${port}`;
        const cloudConfig = [
          '# cluster-autoscaler --cloud-provider=externalgrpc --cloud-config=<this file>',
          `address: "${address}"`,
          `cert: "${MOUNT}/tls.crt"`,
          `key: "${MOUNT}/tls.key"`,
          `cacert: "${MOUNT}/ca.crt"`,
          'grpc_timeout: "30s"',
          '',
        ].join('\n');
        return { address, caCertificate: ca.certPem, clientCertificate: client.certPem, clientKey: client.keyPem, cloudConfig };
      })();
    },
  };
}

function required(config: GrpcConfig): NonNullable<ApiConfig['autoscalerGrpc']> {
  if (!config.autoscalerGrpc) {
    throw new Error('the externalgrpc provider is off (AUTOSCALER_GRPC_PORT is not set)');
  }
  return config.autoscalerGrpc;
}

function hostOf(address: string): string {
  return address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
}
