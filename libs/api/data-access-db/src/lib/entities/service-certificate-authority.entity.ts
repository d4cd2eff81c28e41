import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * A CA the service generated for itself (one row per purpose, e.g. `agent-channel`).
 * Kept in the database so every replica on one Postgres serves certificates from the
 * same CA, which is what agents pin; the private key is sealed with SECRET_KEY.
 */
@Entity({ name: 'service_certificate_authorities' })
export class ServiceCertificateAuthorityEntity {
  @PrimaryColumn({ type: 'text' })
  purpose!: string;

  @Column({ name: 'certificate_pem', type: 'text' })
  certificatePem!: string;

  @Column({ name: 'private_key_sealed', type: 'text' })
  privateKeySealed!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
