import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, subnetContains, type Lab, type LabHost } from '@ccos/tools/lab';
import { labTraces, netnsInodes } from './lab-process';
import { connectSsh, systemSsh } from './ssh-session';

/**
 * Three lab hosts: real sshd with password and key login (system ssh and
 * ssh2), each with its own hostname and its own /etc/kubernetes, and nothing
 * left on the machine after stop().
 */
const PASSWORD = 'lab-Secret-1';

/** sshd processes in the given network namespaces (by inode). */
function sshdPidsIn(netns: readonly string[]): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).flatMap((entry) => {
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const net = /\[(\d+)\]/.exec(readlinkSync(`/proc/${entry}/ns/net`))?.[1] ?? '';
      return (cmdline.startsWith('sshd') || cmdline.includes('/usr/sbin/sshd')) && netns.includes(net) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

describe('lab hosts', () => {
  let lab: Lab | undefined;

  beforeAll(async () => {
    lab = await startLab({ hosts: 3, password: PASSWORD });
  });

  afterAll(async () => {
    await lab?.stop();
  });

  it('gives each host its own address, hostname, password and key login', async () => {
    const { hosts, privateKeyPath } = lab as Lab;
    // Consecutive addresses after the lab's gateway and VIP, all in its own slice.
    const last = (ip: string) => Number(ip.split('.').at(-1));
    expect(hosts.map((host) => last(host.ip))).toEqual([1, 2, 3].map((n) => last((lab as Lab).vip) + n));
    expect(hosts.every((host) => subnetContains((lab as Lab).subnet, host.ip))).toBe(true);
    const privateKey = readFileSync(privateKeyPath);
    await Promise.all(hosts.map(async (host) => {
      const byKey = await systemSsh(host, { identityFile: privateKeyPath }, 'hostname');
      expect(byKey, byKey.stderr).toMatchObject({ code: 0, stdout: `${host.hostname}\n` });
      const byPassword = await systemSsh(host, { password: PASSWORD }, 'cat /etc/hostname; id -un');
      expect(byPassword, byPassword.stderr).toMatchObject({ code: 0, stdout: `${host.hostname}\nroot\n` });
      for (const auth of [{ password: PASSWORD }, { privateKey }]) {
        const session = await connectSsh(host, auth);
        const result = await session.exec('hostname; echo $PATH; test -d /run/sshd && echo run-sshd');
        session.close();
        expect(result.stdout).toBe(`${host.hostname}\n/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nrun-sshd\n`);
      }
    }));
    const [first, second] = hosts as [LabHost, LabHost];
    const wrong = await systemSsh(first, { password: 'not-the-password' }, 'true');
    expect(wrong.code).not.toBe(0);
    await expect(connectSsh(second, { password: 'not-the-password' })).rejects.toThrow(/authentication/i);
    expect(new Set(hosts.map((host) => host.hostname)).size).toBe(3);
  });

  it('keeps files a host writes to its own view', async () => {
    const [h1, h2] = (lab as Lab).hosts;
    if (h1 === undefined || h2 === undefined) {
      throw new Error('expected hosts');
    }
    const one = await connectSsh(h1, { password: PASSWORD });
    const two = await connectSsh(h2, { password: PASSWORD });
    try {
      const written = await one.exec('mkdir -p /etc/kubernetes /opt/ccos-scaler && echo h1-secret > /etc/kubernetes/marker && cat /etc/kubernetes/marker && touch /opt/ccos-scaler/boot-worker /usr/local/bin/kubelet /tmp/x /root/y');
      expect(written).toMatchObject({ code: 0, stdout: 'h1-secret\n' });
      const other = await two.exec('ls /etc/kubernetes/marker /opt/ccos-scaler/boot-worker /usr/local/bin/kubelet /tmp/x /root/y 2>&1; echo done');
      expect(other.stdout).not.toMatch(/^\/etc\/kubernetes\/marker$/m);
      expect(other.stdout.match(/No such file or directory/g)).toHaveLength(5);
      expect(existsSync('/etc/kubernetes/marker')).toBe(false);
      expect(existsSync('/opt/ccos-scaler')).toBe(false);
      // Each host has its own root password: the machine's /etc/shadow is untouched.
      const shadow = await one.exec('grep "^root:" /etc/shadow | cut -d: -f2');
      expect(shadow.stdout).not.toBe(`${readFileSync('/etc/shadow', 'utf8').split('\n').find((line) => line.startsWith('root:'))?.split(':')[1] ?? ''}\n`);
    } finally {
      one.close();
      two.close();
    }
  });

  it('leaves nothing of it behind after stop', async () => {
    const description = (lab as Lab).description;
    const inodes = netnsInodes(description);
    expect(sshdPidsIn(inodes).length).toBeGreaterThanOrEqual(3);
    expect(labTraces(description, inodes).length).toBeGreaterThan(0);
    await (lab as Lab).stop();
    lab = undefined;
    expect(labTraces(description, inodes)).toEqual([]);
    expect(sshdPidsIn(inodes)).toEqual([]);
  });
});
