import type { DataSource } from 'typeorm';
import { ServiceCertificateAuthorityEntity } from '@ccos/api/data-access-db';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type CertifiedKey, generateCertificateAuthority } from './certificates';

const PURPOSE = 'agent-channel';
const SEAL_PURPOSE = 'service CA private key';

/**
 * The service's own CA, in the database rather than in a local folder: every replica on
 * one Postgres must serve certificates an agent configured by any other replica accepts,
 * and the database is the one thing they share (in embedded mode it lives in DATA_DIR
 * anyway). The private key is sealed with SECRET_KEY like every other secret at rest.
 * Replicas starting together on an empty database race to insert; the first row wins and
 * everyone reads it back.
 */
export async function loadOrCreateServiceCa(dataSource: DataSource, secrets: SecretBox): Promise<CertifiedKey> {
  const repository = dataSource.getRepository(ServiceCertificateAuthorityEntity);
  const stored = await repository.findOneBy({ purpose: PURPOSE });
  if (stored) {
    return { certPem: stored.certificatePem, keyPem: secrets.open(stored.privateKeySealed, SEAL_PURPOSE) };
  }
  const generated = await generateCertificateAuthority('ccos-scaler agent channel CA');
  await repository
    .createQueryBuilder()
    .insert()
    .values({ purpose: PURPOSE, certificatePem: generated.certPem, privateKeySealed: secrets.seal(generated.keyPem, SEAL_PURPOSE) })
    .orIgnore()
    .execute();
  const winner = await repository.findOneByOrFail({ purpose: PURPOSE });
  return { certPem: winner.certificatePem, keyPem: secrets.open(winner.privateKeySealed, SEAL_PURPOSE) };
}
