import { describe, expect, it } from 'vitest';
import type { InstalledPackage } from './rpm-database';
import { decodeRpm, encodeRpm, nevra, RpmFormatError } from './rpm-package';
import { dependencyOrder, planTransaction } from './rpm-transaction';

const meta = (name: string, requires: string[] = []) => ({ name, version: '1.0', release: '1.el9', arch: 'x86_64', summary: name, requires, payloadSize: 0, payloadSha256: '' });

describe('stand-in rpm files', () => {
  it('round-trips and starts with the rpm lead magic', () => {
    const file = encodeRpm(meta('socat'), Buffer.from('payload'));
    expect(file.subarray(0, 4).toString('hex')).toBe('edabeedb');
    expect(decodeRpm(file).metadata).toMatchObject({ name: 'socat', payloadSize: 7 });
    expect(nevra(meta('socat'))).toBe('socat-1.0-1.el9.x86_64');
  });

  it('refuses non-rpm files and corrupt payloads in rpm words', () => {
    expect(() => decodeRpm(Buffer.from('<html>502 Bad Gateway</html>'.padEnd(200)))).toThrow('not an rpm package');
    const file = encodeRpm(meta('socat'), Buffer.alloc(1000, 1));
    const corrupt = Buffer.from(file);
    corrupt[corrupt.length - 1] = 0;
    expect(() => decodeRpm(corrupt)).toThrow(/Payload SHA256 digest: BAD/);
    expect(() => decodeRpm(file.subarray(0, file.length - 10))).toThrow(RpmFormatError);
  });
});

describe('rpm transactions', () => {
  const installed: InstalledPackage[] = [{ ...meta('bash'), installTime: '', size: 0 }];

  it('resolves dependencies within the transaction and orders them', () => {
    const plan = planTransaction([meta('cri-o', ['conmon', 'bash']), meta('conmon')], installed, { upgrade: true });
    expect(plan.missing).toEqual([]);
    expect(plan.install.map((pkg) => pkg.name)).toEqual(['conmon', 'cri-o']);
  });

  it('reports missing dependencies and already installed packages', () => {
    expect(planTransaction([meta('cri-o', ['conmon'])], installed, { upgrade: false }).missing)
      .toEqual(['conmon is needed by cri-o-1.0-1.el9.x86_64']);
    expect(planTransaction([meta('bash')], installed, { upgrade: true }).alreadyInstalled).toHaveLength(1);
    expect(dependencyOrder([meta('a', ['b']), meta('b', ['a'])]).map((pkg) => pkg.name)).toEqual(['b', 'a']);
  });
});
