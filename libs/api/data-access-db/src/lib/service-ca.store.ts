import type { DataSource, Repository } from 'typeorm';
import { ServiceCertificateAuthorityEntity } from './entities/service-certificate-authority.entity';

/** A CA as stored: its certificate and its private key sealed by the caller. */
export type StoredServiceCa = Pick<ServiceCertificateAuthorityEntity, 'purpose' | 'certificatePem' | 'privateKeySealed'>;

/** `service_certificate_authorities`: one CA the service generated for itself per purpose, shared by every replica. */
export class ServiceCaStore {
  private readonly cas: Repository<ServiceCertificateAuthorityEntity>;

  constructor(dataSource: DataSource) {
    this.cas = dataSource.getRepository(ServiceCertificateAuthorityEntity);
  }

  find(purpose: string): Promise<StoredServiceCa | null> {
    return this.cas.findOneBy({ purpose });
  }

  /**
   * Stores `ca` unless a CA for its purpose exists (replicas starting together race; the first
   * row wins), and returns the one stored.
   */
  async insertOrKeep(ca: StoredServiceCa): Promise<StoredServiceCa> {
    await this.cas.createQueryBuilder().insert().values(ca).orIgnore().execute();
    return this.cas.findOneByOrFail({ purpose: ca.purpose });
  }
}
