import { describe, expect, it } from 'vitest';
import { REDACTED, isSecretKeyName, scrubSecrets, scrubSecretsDeep } from './scrub-secrets';

const JWT = 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImFiYyJ9.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0.c2lnbmF0dXJlLWJ5dGVz';
const BOOTSTRAP = 'abcdef.0123456789abcdef';
const RSA_KEY = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun', '-----END RSA PRIVATE KEY-----'].join('\n');
const CERT = ['-----BEGIN CERTIFICATE-----', 'MIIBszCCAVmgAwIBAgIUQ7aPublicCertificateBytes', '-----END CERTIFICATE-----'].join('\n');
/** base64 of a PEM private key, as kubeconfig's client-key-data holds it. */
const KEY_DATA = 'LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVBdTFTVTFMZlZMUEhDb3pNeEgyTW80bGdPRWVQek5tMHRSZ2VMZXpWNmZmQXQwZ3VuCi0tLS0tRU5EIFJTQSBQUklWQVRFIEtFWS0tLS0tCg==';

describe('scrubSecrets', () => {
  it.each([
    ['a JWT (service account token)', `token: ${JWT}`, JWT],
    ['a JWT cut short by an excerpt', `"token":"${JWT.slice(0, 40)}`, JWT.slice(0, 40)],
    ['a bootstrap token', `--token ${BOOTSTRAP} --discovery`, BOOTSTRAP],
    ['a bootstrap token inside a URL-encoded kubeconfig', `users%3A%0A-%20token%3A%20${BOOTSTRAP}%0A`, BOOTSTRAP],
    ['a Bearer header', 'Authorization: Bearer agt_3kJx9QmZ1v-Ab_cd', 'agt_3kJx9QmZ1v-Ab_cd'],
    ['a password in a URL', 'proxy https://user:hunter2pass@proxy.example:3128 refused', 'hunter2pass'],
    ['a JSON password', '{"username":"bob","password":"s3cr3t-pw"}', 's3cr3t-pw'],
    ['a JSON token inside a JSON string', String.raw`{\"bootstrapToken\":\"q1w2e3r4t5\"}`, 'q1w2e3r4t5'],
    ['a YAML client key', `client-key-data: ${KEY_DATA}`, KEY_DATA.slice(0, 40)],
    ['base64 of a private key outside any key name', `blob ${KEY_DATA} end`, KEY_DATA.slice(0, 40)],
    ['a PEM private key', `key:\n${RSA_KEY}\nrest`, 'MIIEowIBAAKCAQEA'],
    ['a PEM private key cut before its END line', RSA_KEY.slice(0, 80), 'MIIEowIBAAKCAQEA'],
    ['an OpenSSH private key inside JSON', JSON.stringify({ k: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE\n-----END OPENSSH PRIVATE KEY-----' }), 'b3BlbnNzaC1rZXktdjE'],
    ['a data: URL (an Ignition file)', '{"contents":{"source":"data:,apiVersion%3A%20v1%0Akind%3A%20Config"}}', 'apiVersion%3A%20v1'],
    ['a base64 data: URL', '"source":"data:text/plain;charset=utf-8;base64,YXBpVmVyc2lvbjogdjE="', 'YXBpVmVyc2lvbjogdjE='],
  ])('removes %s', (_name, text, secret) => {
    const scrubbed = scrubSecrets(text);
    expect(scrubbed).not.toContain(secret);
    expect(scrubbed).toContain(REDACTED);
  });

  it('keeps what helps a diagnosis: HTML error pages, certificates, prose about tokens', () => {
    for (const text of [
      '<!DOCTYPE html><html><head><title>503 Service Unavailable</title></head><body>No server is available</body></html>',
      CERT,
      'the bootstrap token was not accepted; Bearer tokens expire after 24 h',
      'Basic checks passed on worker-1.example.com',
      '{"ignition":{"version":"2.2.0"}}',
    ]) {
      expect(scrubSecrets(text)).toBe(text);
    }
  });

  it('shows which kind of key was removed', () => {
    expect(scrubSecrets(RSA_KEY)).toBe(`-----BEGIN RSA PRIVATE KEY-----${REDACTED}-----END RSA PRIVATE KEY-----`);
  });

  it('takes linear time on text built to make regular expressions backtrack', () => {
    const hostile = [
      'a-'.repeat(200_000),
      `token${' '.repeat(100_000)}`,
      `data:${'a'.repeat(300_000)}`,
      `https://${'u'.repeat(300_000)}`,
      `-----BEGIN ${'A '.repeat(50_000)}`,
      `${'-----BEGIN PRIVATE KEY-----'.repeat(10_000)}`,
      `Bearer ${'x'.repeat(300_000)}`,
      `eyJ${'A'.repeat(300_000)}`,
    ];
    const started = Date.now();
    for (const text of hostile) {
      scrubSecrets(text);
    }
    expect(Date.now() - started).toBeLessThan(1500);
  });
});

describe('scrubSecretsDeep', () => {
  it('scrubs every string and drops values of keys named like credentials', () => {
    const detail = { code: 'IGNITION_NOT_IGNITION', fetch: { bodyHead: `{"token":"${BOOTSTRAP}"}`, status: 200 }, auth: { token: 'plain-opaque-value' }, lines: [`Bearer ${JWT}`], count: 3 };
    const scrubbed = scrubSecretsDeep(detail);
    expect(JSON.stringify(scrubbed)).not.toMatch(new RegExp(`${BOOTSTRAP}|plain-opaque-value|${JWT.slice(0, 20)}`));
    expect(scrubbed).toMatchObject({ code: 'IGNITION_NOT_IGNITION', fetch: { status: 200 }, auth: { token: REDACTED }, count: 3 });
    expect(detail.auth.token).toBe('plain-opaque-value');
  });

  it.each([
    ['token', true],
    ['bootstrapToken', true],
    ['client-key-data', true],
    ['db_password', true],
    ['apiKey', true],
    ['secretKey', true],
    ['tokenKind', false],
    ['passwordHash', false],
    ['hostname', false],
  ])('tells %s is a credential key: %s', (key, secret) => {
    expect(isSecretKeyName(key)).toBe(secret);
  });
});
