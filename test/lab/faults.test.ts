import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetemUnavailableError, startLab, type Lab, type LabHost } from '@ccos/tools/lab';
import { fetchWorkerConfig } from './ignition-apply';
import { connectSsh } from './ssh-session';

/**
 * Fault helpers: a cut link makes SSH time out and a restore brings it
 * back; a rekey changes the host key; a stopped sshd refuses connections;
 * swap and clock faults show in the host's swapon/timedatectl; the machine
 * config server can answer HTML; latency needs netem and says so without it.
 */
describe('lab faults', () => {
  let lab: Lab | undefined;
  let privateKey: Buffer;
  let h1: LabHost;
  let h2: LabHost;

  beforeAll(async () => {
    lab = await startLab({ hosts: 2 });
    privateKey = await readFile(lab.privateKeyPath);
    [h1, h2] = lab.hosts as [LabHost, LabHost];
  });

  afterAll(async () => {
    await lab?.stop();
  });

  it('cuts a link so SSH times out, and restores it', async () => {
    const { faults } = lab as Lab;
    await faults.cutLink(h1.id);
    const started = Date.now();
    await expect(connectSsh(h1, { privateKey }, 2000)).rejects.toThrow(/timed out/i);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    // The other host is unaffected.
    (await connectSsh(h2, { privateKey })).close();
    await faults.restoreLink(h1.id);
    const session = await connectSsh(h1, { privateKey });
    expect((await session.exec('hostname')).stdout).toBe(`${h1.hostname}\n`);
    session.close();
  });

  it('changes the host key on rekey', async () => {
    const before = await connectSsh(h1, { privateKey });
    before.close();
    expect(before.fingerprint).toBe((lab as Lab).hostKeyFingerprints[h1.id]?.ed25519);
    const fingerprints = await (lab as Lab).faults.rekey(h1.id);
    const after = await connectSsh(h1, { privateKey });
    after.close();
    expect(after.fingerprint).not.toBe(before.fingerprint);
    expect(after.fingerprint).toBe(fingerprints.ed25519);
    expect((await (lab as Lab).hostKeyFingerprint(h1.id)).ed25519).toBe(fingerprints.ed25519);
  });

  it('reinstalls a host: a new machine-id and host key, nothing it gained, the same address and password', async () => {
    const { faults } = lab as Lab;
    const before = await connectSsh(h2, { privateKey });
    const oldMachineId = (await before.exec('cat /etc/machine-id')).stdout.trim();
    const gained = 'mkdir -p /var/lib/kubelet /etc/kubernetes /opt/ccos && echo x > /var/lib/kubelet/config.yaml && echo x > /etc/kubernetes/kubelet.conf && echo x > /opt/ccos/agent && echo x > /etc/systemd/system/kubelet.service';
    expect((await before.exec(gained)).code).toBe(0);
    const sleeper = Number((await before.exec('nohup sleep 300 > /dev/null 2>&1 & echo $!')).stdout.trim());
    before.close();
    expect(alive(sleeper)).toBe(true);

    const { machineId, fingerprints } = await faults.reinstall(h2.id);
    expect(machineId).toMatch(/^[0-9a-f]{32}$/);
    expect(machineId).not.toBe(oldMachineId);
    const after = await connectSsh(h2, { password: h2.password });
    try {
      expect(after.fingerprint).toBe(fingerprints.ed25519);
      expect(after.fingerprint).not.toBe(before.fingerprint);
      expect((await after.exec('cat /etc/machine-id')).stdout.trim()).toBe(machineId);
      expect((await after.exec('ls /var/lib/kubelet /etc/kubernetes /opt/ccos /etc/systemd/system/kubelet.service 2>&1 | grep -c "No such file"')).stdout.trim()).toBe('4');
      expect(alive(sleeper)).toBe(false);
      expect((await after.exec('hostname; cat /etc/os-release | grep ^ID=')).stdout).toBe(`${h2.hostname}\nID="ccos"\n`);
    } finally {
      after.close();
    }
    (await connectSsh(h2, { privateKey })).close();
  });

  it('refuses connections while sshd is stopped, keeping open sessions', async () => {
    const { faults } = lab as Lab;
    const open = await connectSsh(h2, { privateKey });
    await faults.stopSshd(h2.id);
    await expect(connectSsh(h2, { privateKey })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect((await open.exec('echo still-here')).stdout).toBe('still-here\n');
    open.close();
    await faults.startSshd(h2.id);
    (await connectSsh(h2, { privateKey })).close();
  });

  it('turns fake swap on and the clock unsynchronised for preflight checks', async () => {
    const { faults } = lab as Lab;
    const session = await connectSsh(h1, { privateKey });
    const check = async () => (await session.exec('swapon --show | wc -l; timedatectl | grep synchronized')).stdout;
    try {
      expect(await check()).toBe('0\nSystem clock synchronized: yes\n');
      await faults.setSwap(h1.id, true);
      await faults.setTimeSynchronised(h1.id, false);
      expect(await check()).toBe('2\nSystem clock synchronized: no\n');
      // Another host is unaffected.
      const other = await connectSsh(h2, { privateKey });
      expect((await other.exec('swapon --show | wc -l')).stdout).toBe('0\n');
      other.close();
      // The remedies a preflight hint suggests work on the host itself.
      expect((await session.exec('swapoff -a && timedatectl set-ntp true')).code).toBe(0);
      expect(await check()).toBe('0\nSystem clock synchronized: yes\n');
    } finally {
      session.close();
    }
  });

  it('makes the machine config server answer HTML, and back', async () => {
    const { faults, machineConfigServer, machineConfigCaCert } = lab as Lab;
    const ok = await fetchWorkerConfig(machineConfigServer, machineConfigCaCert);
    expect(ok.status).toBe(200);
    expect((JSON.parse(ok.body) as { ignition: { version: string } }).ignition.version).toBe('3.2.0');
    expect((await fetchWorkerConfig(machineConfigServer, machineConfigCaCert, 'application/json')).status).toBe(406);
    await faults.setMachineConfigServer({ mode: 'html' });
    const html = await fetchWorkerConfig(machineConfigServer, machineConfigCaCert);
    expect(html.contentType).toContain('text/html');
    expect(html.body).toMatch(/^<!DOCTYPE html>/);
    await faults.setMachineConfigServer({ mode: 'ok' });
    expect((await fetchWorkerConfig(machineConfigServer, machineConfigCaCert)).status).toBe(200);
    await faults.setVipPort(22623, false);
    await expect(fetchWorkerConfig(machineConfigServer, machineConfigCaCert)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await faults.setVipPort(22623, true);
    expect((await fetchWorkerConfig(machineConfigServer, machineConfigCaCert)).status).toBe(200);
  });

  it('adds latency with netem where the kernel has it, and says so where it does not', async () => {
    const { faults, netem } = lab as Lab;
    if (netem) {
      await faults.addLatency(h1.id, { delayMs: 200 });
      const session = await connectSsh(h1, { privateKey });
      const started = Date.now();
      await session.exec('true');
      expect(Date.now() - started).toBeGreaterThanOrEqual(200);
      session.close();
      await faults.clearTrafficControl(h1.id);
    } else {
      await expect(faults.addLatency(h1.id, { delayMs: 200, lossPercent: 5 })).rejects.toBeInstanceOf(NetemUnavailableError);
    }
    // Bandwidth limits work everywhere (htb).
    await faults.limitBandwidth(h1.id, '8mbit');
    const session = await connectSsh(h1, { privateKey });
    const started = Date.now();
    const result = await session.exec('head -c 2000000 /dev/zero');
    session.close();
    expect(result.stdout.length).toBe(2_000_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    await faults.clearTrafficControl(h1.id);
  });
});

/** Running, not a zombie left for a parent that does not reap it. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}
