import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { Pkcs10CertificateRequestGenerator, SubjectAlternativeNameExtension, type JsonGeneralNames } from '@peculiar/x509';
import { describe, expect, it } from 'vitest';
import { generateCertificateRequest } from '../testing/kube-sim-fixture';
import { parseCertificateRequest } from './csr-request';

type Crypto = Parameters<typeof Pkcs10CertificateRequestGenerator.create>[1];
type RsaHashedKeyGenParams = webcrypto.RsaHashedKeyGenParams;
type EcKeyGenParams = webcrypto.EcKeyGenParams;
const crypto = webcrypto as unknown as Crypto;

async function request(subject: string, key: RsaHashedKeyGenParams | EcKeyGenParams, sans: JsonGeneralNames = []): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey(key, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const signingAlgorithm = key.name === 'ECDSA' ? { name: 'ECDSA', hash: (key as EcKeyGenParams).namedCurve === 'P-384' ? 'SHA-384' : 'SHA-256' } : key;
  const csr = await Pkcs10CertificateRequestGenerator.create(
    { name: subject, keys, signingAlgorithm, extensions: sans.length > 0 ? [new SubjectAlternativeNameExtension(sans)] : [] },
    crypto,
  );
  return csr.toString('pem');
}

const RSA_2048: RsaHashedKeyGenParams = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' };

describe('parseCertificateRequest', () => {
  it('reads a kubelet serving request (kube-sim, ECDSA P-256): subject, SANs, key, valid signature', async () => {
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:w1', organizations: ['system:nodes'], dnsNames: ['w1', 'w1.lab'], ipAddresses: ['198.18.0.11'] });
    const parsed = await parseCertificateRequest(csrPem);
    expect(parsed).toEqual({
      ok: true,
      request: {
        subject: 'O=system:nodes, CN=system:node:w1',
        commonName: 'system:node:w1',
        organizations: ['system:nodes'],
        dnsNames: ['w1', 'w1.lab'],
        ipAddresses: ['198.18.0.11'],
        emailAddresses: [],
        uris: [],
        otherNames: [],
        publicKey: { algorithm: 'EC', bits: 256, curve: 'P-256' },
        signatureAlgorithm: 'ECDSA with SHA-256',
        signatureValid: true,
      },
    });
  });

  it('reads an RSA request with extra SANs (emails, URIs, IPv6) so a policy can refuse them', async () => {
    const pem = await request('CN=system:node:w2, O=system:nodes, O=system:masters', RSA_2048, [
      { type: 'dns', value: 'w2' },
      { type: 'ip', value: '10.0.0.2' },
      { type: 'ip', value: 'fd00::2' },
      { type: 'email', value: 'root@example.com' },
      { type: 'url', value: 'spiffe://cluster/ns/kube-system/sa/admin' },
    ]);
    const parsed = await parseCertificateRequest(pem);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.request).toMatchObject({
        commonName: 'system:node:w2',
        organizations: ['system:nodes', 'system:masters'],
        dnsNames: ['w2'],
        ipAddresses: ['10.0.0.2', 'fd00::2'],
        emailAddresses: ['root@example.com'],
        uris: ['spiffe://cluster/ns/kube-system/sa/admin'],
        publicKey: { algorithm: 'RSA', bits: 2048, curve: null },
        signatureAlgorithm: 'RSASSA-PKCS1-v1_5 with SHA-256',
        signatureValid: true,
      });
    }
  });

  it('reads EC P-384, and accepts base64 of PEM (spec.request) and DER', async () => {
    const pem = await request('CN=system:node:w3, O=system:nodes', { name: 'ECDSA', namedCurve: 'P-384' });
    const fromBase64 = await parseCertificateRequest(Buffer.from(pem).toString('base64'));
    expect(fromBase64).toMatchObject({ ok: true, request: { publicKey: { algorithm: 'EC', bits: 384, curve: 'P-384' }, signatureAlgorithm: 'ECDSA with SHA-384', signatureValid: true } });
    const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
    expect(await parseCertificateRequest(new Uint8Array(der))).toEqual(fromBase64);
  });

  it('reports a signature that does not match the key', async () => {
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:w4', organizations: ['system:nodes'] });
    const der = Buffer.from(csrPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
    // The signature is the last thing in the request: flip a bit of it.
    der[der.length - 5] ^= 0x01;
    expect(await parseCertificateRequest(new Uint8Array(der))).toMatchObject({ ok: true, request: { commonName: 'system:node:w4', signatureValid: false } });
  });

  it.each([
    ['Ed25519', { name: 'Ed25519' }, { name: 'Ed25519' }, 'Ed25519'],
    ['RSA-PSS (checked by the library)', { ...RSA_2048, name: 'RSA-PSS' }, { name: 'RSA-PSS', hash: 'SHA-256', saltLength: 32 }, 'RSA'],
  ])('checks the signature of a %s request, and refuses it with a bit flipped', async (_kind, key, signingAlgorithm, algorithm) => {
    const keys = (await webcrypto.subtle.generateKey(key, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const csr = await Pkcs10CertificateRequestGenerator.create({ name: 'CN=system:node:w6, O=system:nodes', keys, signingAlgorithm }, crypto);
    const der = Buffer.from(csr.rawData);
    expect(await parseCertificateRequest(new Uint8Array(der))).toMatchObject({ ok: true, request: { publicKey: { algorithm }, signatureValid: true } });
    der[der.length - 5] ^= 0x01;
    expect(await parseCertificateRequest(new Uint8Array(der))).toMatchObject({ ok: true, request: { commonName: 'system:node:w6', signatureValid: false } });
  });

  it('reports a request whose signed part was changed after signing (a name swapped in the subject)', async () => {
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:w4', organizations: ['system:nodes'] });
    const der = Buffer.from(csrPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
    const at = der.indexOf('system:node:w4') + 'system:node:w'.length;
    der[at] = '5'.charCodeAt(0);
    expect(await parseCertificateRequest(new Uint8Array(der))).toMatchObject({ ok: true, request: { commonName: 'system:node:w5', signatureValid: false } });
  });

  it.each([
    ['text that is not base64 PEM', 'hello world'],
    ['a PEM block of garbage', '-----BEGIN CERTIFICATE REQUEST-----\nAAAAAAAA\n-----END CERTIFICATE REQUEST-----\n'],
    ['a certificate instead of a request', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'],
    ['empty input', ''],
  ])('gives a typed failure for %s', async (_name, input) => {
    const parsed = await parseCertificateRequest(input);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toMatch(/certificate request/);
  });
});
