import type { IncomingMessage } from 'node:http';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { requestOrigins } from './request-origin';

const request = (peer: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress: peer }, connection: { remoteAddress: peer }, headers }) as unknown as IncomingMessage;
const silent = pino({ level: 'silent' });

describe('request origins', () => {
  it.each([
    ['no trusted proxies: X-Forwarded-For is anyone\'s to write, so the peer counts', [], '203.0.113.7', '10.9.9.9', '203.0.113.7'],
    ['a trusted proxy: the client it forwards for', ['10.0.0.2'], '10.0.0.2', '198.51.100.4', '198.51.100.4'],
    ['a chain of trusted proxies: the first address from the right that none of them vouches for', ['10.0.0.0/8'], '10.0.0.2', '192.0.2.1, 198.51.100.4, 10.0.0.9', '198.51.100.4'],
    ['an untrusted peer claiming to be a trusted proxy\'s client', ['10.0.0.2'], '203.0.113.7', '198.51.100.4', '203.0.113.7'],
    ['a trusted proxy forwarding garbage: the proxy itself', ['10.0.0.2'], '10.0.0.2', 'not-an-address', '10.0.0.2'],
    ['loopback by name', ['loopback'], '127.0.0.1', '198.51.100.4', '198.51.100.4'],
    ['an IPv4 client on an IPv6 socket', [], '::ffff:192.0.2.5', '', '192.0.2.5'],
  ])('%s', (_case, trusted, peer, forwarded, expected) => {
    const origins = requestOrigins(trusted, silent);
    expect(origins(request(peer, forwarded ? { 'x-forwarded-for': forwarded, 'user-agent': 'curl/8.5' } : {})).address).toBe(expected);
  });

  it('keeps the user agent', () => {
    expect(requestOrigins([], silent)(request('192.0.2.1', { 'user-agent': 'Mozilla/5.0' }))).toEqual({ address: '192.0.2.1', userAgent: 'Mozilla/5.0' });
    expect(requestOrigins([], silent)(request('192.0.2.1')).userAgent).toBeNull();
  });

  it('refuses a TRUSTED_PROXIES that is not a list of addresses or ranges at start', async () => {
    await expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, not-an-ip', DATA_DIR: '/tmp/ccos-config-test', SECRET_KEY: 'x'.repeat(40) })).rejects.toThrow(/^TRUSTED_PROXIES=10\.0\.0\.0\/8, not-an-ip is not a comma-separated list/);
    expect((await loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, loopback', DATA_DIR: '/tmp/ccos-config-test', SECRET_KEY: 'x'.repeat(40) })).trustedProxies).toEqual(['10.0.0.0/8', 'loopback']);
  });
});
