import 'reflect-metadata';
import { createHash, webcrypto } from 'node:crypto';
import { SubjectAlternativeNameExtension, X509CertificateGenerator, type JsonGeneralNames } from '@peculiar/x509';
import { describe, expect, it } from 'vitest';
import { parseIssuedCertificate } from './issued-certificate';

type Crypto = Parameters<typeof X509CertificateGenerator.createSelfSigned>[1];

async function certificate(names: JsonGeneralNames): Promise<{ pem: string; der: Buffer }> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const issued = await X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: '0a1b2c',
      name: 'CN=system:node:w1, O=system:nodes',
      notBefore: new Date('2026-01-01T00:00:00Z'),
      notAfter: new Date('2027-01-01T00:00:00Z'),
      keys,
      signingAlgorithm: algorithm,
      extensions: names.length > 0 ? [new SubjectAlternativeNameExtension(names)] : [],
    },
    webcrypto as unknown as Crypto,
  );
  return { pem: issued.toString('pem'), der: Buffer.from(issued.rawData) };
}

describe('parseIssuedCertificate', () => {
  it('reads the subject, serial, validity, credential id and every SAN (IPv6 compressed, a quoted name whole)', async () => {
    const { pem, der } = await certificate([
      { type: 'dns', value: 'w1.lab.example' },
      { type: 'dns', value: 'odd,name"here' },
      { type: 'ip', value: '198.18.0.5' },
      { type: 'ip', value: 'fd00::1' },
    ]);
    expect(parseIssuedCertificate(pem)).toEqual({
      subject: 'CN=system:node:w1, O=system:nodes',
      serialNumber: '0a1b2c',
      credentialId: `X509SHA256=${createHash('sha256').update(der).digest('hex')}`,
      dnsNames: ['w1.lab.example', 'odd,name"here'],
      ipAddresses: ['198.18.0.5', 'fd00::1'],
      notBefore: '2026-01-01T00:00:00.000Z',
      notAfter: '2027-01-01T00:00:00.000Z',
    });
  });

  it('reads base64 of the PEM (the JSON form of status.certificate) and a certificate without SANs', async () => {
    const { pem } = await certificate([]);
    expect(parseIssuedCertificate(Buffer.from(pem).toString('base64'))).toMatchObject({ dnsNames: [], ipAddresses: [], serialNumber: '0a1b2c' });
  });

  it('is null for nothing, for text without a certificate and for a damaged one', async () => {
    const { pem } = await certificate([]);
    expect(parseIssuedCertificate('')).toBeNull();
    expect(parseIssuedCertificate(null)).toBeNull();
    expect(parseIssuedCertificate('no certificate here')).toBeNull();
    expect(parseIssuedCertificate(pem.replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAAAAAAAAAAAAAAAAAA'))).toBeNull();
  });
});
