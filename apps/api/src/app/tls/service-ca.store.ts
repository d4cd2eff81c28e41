import type { ServiceCaStore } from '@ccos/api/data-access-db';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type CertifiedKey, generateCertificateAuthority } from './certificates';

const PURPOSE = 'agent-channel';

/**
 * Which CA: the agent channel's (what agents pin), or cluster-autoscaler's externalgrpc
 * provider's (its server certificate and the client certificates it accepts). Apart, so a
 * certificate of one never passes for the other.
 */
export type ServiceCaPurpose = 'agent-channel' | 'autoscaler-grpc';
const CA_NAMES: Record<ServiceCaPurpose, string> = { 'agent-channel': 'ccos-scaler agent channel CA', 'autoscaler-grpc': 'ccos-scaler cluster-autoscaler provider CA' };
const SEAL_PURPOSE = 'service CA private key';

/**
 * The service's own CA, in the database rather than in a local folder: every replica on
 * one Postgres must serve certificates an agent configured by any other replica accepts,
 * and the database is the one thing they share (in embedded mode it lives in DATA_DIR
 * anyway). The private key is sealed with SECRET_KEY like every other secret at rest.
 * Replicas starting together on an empty database race to insert; the first row wins and
 * everyone reads it back.
 */
export async function loadOrCreateServiceCa(store: ServiceCaStore, secrets: SecretBox, purpose: ServiceCaPurpose = PURPOSE): Promise<CertifiedKey> {
  const stored = await store.find(purpose);
  if (stored) {
    return { certPem: stored.certificatePem, keyPem: secrets.open(stored.privateKeySealed, SEAL_PURPOSE) };
  }
  const generated = await generateCertificateAuthority(CA_NAMES[purpose]);
  const winner = await store.insertOrKeep({ purpose, certificatePem: generated.certPem, privateKeySealed: secrets.seal(generated.keyPem, SEAL_PURPOSE) });
  return { certPem: winner.certificatePem, keyPem: secrets.open(winner.privateKeySealed, SEAL_PURPOSE) };
}
