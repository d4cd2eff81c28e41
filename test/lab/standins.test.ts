import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACT_BINARIES, RPM_CATALOGUE, startLab, type Lab, type LabHost } from '@ccos/tools/lab';
import { connectSsh, type SshSession } from './ssh-session';

/**
 * The stand-ins on a lab host behave like the real commands for what the
 * agent does: rpm/dnf install the artifact rpms (and refuse junk), systemctl
 * runs units from /etc/systemd/system with journalctl showing their output,
 * sysctl never touches the machine's kernel, reboot reboots the host and
 * nothing else, poweroff changes nothing.
 */
describe('stand-ins on a lab host', () => {
  let lab: Lab | undefined;
  let session: SshSession;

  const run = async (command: string, stdin?: Buffer | string) => session.exec(command, stdin);

  beforeAll(async () => {
    lab = await startLab({ hosts: 1 });
    session = await connectSsh(lab.hosts[0] as LabHost, { privateKey: await readFile(lab.privateKeyPath) });
  });

  afterAll(async () => {
    session?.close();
    await lab?.stop();
  });

  it('lays out the artifacts the installer service serves', async () => {
    const dir = (lab as Lab).artifactsDir;
    expect((await readdir(join(dir, 'binary'))).sort()).toEqual([...ARTIFACT_BINARIES].sort());
    const rpms = await readdir(join(dir, 'rpm'));
    expect(rpms).toHaveLength(73);
    expect(RPM_CATALOGUE).toHaveLength(73);
    expect(await readdir(join(dir, 'unit'))).toContain('kubelet.service');
    expect((await readFile(join(dir, 'VERSION'), 'utf8')).trim()).toMatch(/^4\.12\.0/);
  });

  it('installs rpms with rpm and dnf, in one transaction, and refuses junk', async () => {
    const rpmDir = join((lab as Lab).artifactsDir, 'rpm');
    const files = await readdir(rpmDir);
    await run('mkdir -p /opt/ccos-scaler/rpm');
    for (let i = 0; i < files.length; i += 8) {
      const uploads = await Promise.all(files.slice(i, i + 8).map(async (file) =>
        (await run(`cat > /opt/ccos-scaler/rpm/${file}`, await readFile(join(rpmDir, file)))).code));
      expect(uploads.every((code) => code === 0)).toBe(true);
    }
    const crio = files.find((file) => file.startsWith('cri-o-')) ?? '';
    const alone = await run(`rpm -ivh /opt/ccos-scaler/rpm/${crio}`);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain('error: Failed dependencies:');
    expect(alone.stderr).toMatch(/conmon is needed by cri-o-/);

    const junk = await run('echo "<html>502</html>" > /tmp/bad.rpm && rpm -ivh /tmp/bad.rpm');
    expect(junk).toMatchObject({ code: 1 });
    expect(junk.stderr).toContain('not an rpm package');
    const socat = files.find((file) => file.startsWith('socat-')) ?? '';
    const truncated = await run(`head -c 500 /opt/ccos-scaler/rpm/${socat} > /tmp/short.rpm && rpm -K /tmp/short.rpm`);
    expect(truncated.code).toBe(1);

    const noYes = await run('dnf install /opt/ccos-scaler/rpm/*.rpm', '\n');
    expect(noYes.code).toBe(1);
    expect(noYes.stdout).toContain('Operation aborted.');
    const installed = await run('dnf install -y /opt/ccos-scaler/rpm/*.rpm');
    expect(installed, installed.stderr).toMatchObject({ code: 0 });
    expect(installed.stdout).toContain('Complete!');
    expect((await run('rpm -q cri-o --qf "%{NAME} %{VERSION}\\n"')).stdout).toBe('cri-o 1.25.2\n');
    const all = await run('rpm -qa');
    expect(all.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(73);
    const again = await run(`rpm -ivh /opt/ccos-scaler/rpm/${socat}`);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/package socat-.* is already installed/);
  });

  it('runs units with systemctl and shows their output with journalctl', async () => {
    await run('cat > /etc/systemd/system/hello.service', [
      '[Unit]', 'Description=Hello service', '', '[Service]',
      'Environment="GREETING=hello from" NAME=lab',
      'ExecStart=/bin/sh -c \'echo "$GREETING $NAME"; exec sleep 600\'',
      'Restart=always', '', '[Install]', 'WantedBy=multi-user.target', '',
    ].join('\n'));
    const enabled = await run('systemctl daemon-reload && systemctl enable --now hello && systemctl is-active hello && systemctl is-enabled hello');
    expect(enabled, enabled.stderr).toMatchObject({ code: 0, stdout: 'active\nenabled\n' });
    expect(enabled.stderr).toContain('Created symlink /etc/systemd/system/multi-user.target.wants/hello.service');
    await expect.poll(async () => (await run('journalctl -u hello --no-pager -n 5')).stdout, { timeout: 5000 }).toContain('hello from lab');
    const status = await run('systemctl status hello');
    expect(status.stdout).toMatch(/Active: active \(running\)/);
    const pid = (await run('systemctl show hello -p MainPID --value')).stdout.trim();
    expect(Number(pid)).toBeGreaterThan(0);
    // The service runs inside the host's namespaces, as the session does.
    expect((await run(`readlink /proc/${pid}/ns/net /proc/${pid}/ns/mnt`)).stdout).toBe((await run('readlink /proc/self/ns/net /proc/self/ns/mnt')).stdout);

    expect((await run('systemctl stop hello; systemctl is-active hello')).stdout).toBe('inactive\n');
    expect((await run(`kill -0 ${pid} 2>/dev/null || echo gone`)).stdout).toBe('gone\n');
    expect((await run('systemctl start nope')).stderr).toContain('Unit nope.service not found.');

    // A failing unit restarts per Restart= and shows as failed without it.
    await run('cat > /etc/systemd/system/broken.service', '[Service]\nExecStart=/usr/local/bin/missing-binary\n');
    expect((await run('systemctl start broken')).code).toBe(0);
    await expect.poll(async () => (await run('systemctl is-active broken')).stdout, { timeout: 5000 }).toBe('failed\n');
    expect((await run('journalctl -u broken --no-pager')).stdout).toContain('status=203/EXEC');
  });

  it('keeps kernel settings and power actions away from the machine', async () => {
    const machineSwappiness = (await readFile('/proc/sys/vm/swappiness', 'utf8')).trim();
    expect((await run('sysctl -w vm.swappiness=0 && sysctl -n vm.swappiness')).stdout).toBe('vm.swappiness = 0\n0\n');
    expect((await readFile('/proc/sys/vm/swappiness', 'utf8')).trim()).toBe(machineSwappiness);
    const poweroff = await run('poweroff; echo after');
    expect(poweroff.stdout).toBe('after\n');
    expect(poweroff.stderr).toContain('not carried out');
    expect((await run('timedatectl show -p NTPSynchronized --value; hostnamectl status | grep "Static hostname"')).stdout)
      .toBe(`yes\n Static hostname: ${(lab as Lab).hosts[0]?.hostname}\n`);
    expect((await run('/usr/bin/systemctl --version')).stdout).toContain('lab stand-in');
  });

  // Last: it ends the session.
  it('reboots the host, not the machine: sessions end, the boot id changes, sshd and the enabled units come back', async () => {
    const host = (lab as Lab).hosts[0] as LabHost;
    const machineBootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
    await run('cat > /etc/systemd/system/sleeper.service', '[Service]\nExecStart=/bin/sleep 3600\n[Install]\nWantedBy=multi-user.target\n');
    expect((await run('systemctl enable --now sleeper')).code).toBe(0);
    const before = (await run('cat /proc/sys/kernel/random/boot_id')).stdout.trim();
    expect(before).toMatch(/^[0-9a-f-]{36}$/);
    expect(before).not.toBe(machineBootId);

    const reboot = await run('systemctl reboot; echo after');
    expect(reboot.stdout).toBe('after\n');
    await expect.poll(async () => session.exec('true').then(() => 'open', () => 'closed'), { timeout: 10_000, interval: 100 }).toBe('closed');
    session.close();

    const key = await readFile((lab as Lab).privateKeyPath);
    let booted: SshSession | null = null;
    await expect.poll(async () => {
      booted = await connectSsh(host, { privateKey: key }, 2000).catch(() => null);
      return booted !== null;
    }, { timeout: 20_000, interval: 250 }).toBe(true);
    session = booted as unknown as SshSession;
    const after = (await run('cat /proc/sys/kernel/random/boot_id')).stdout.trim();
    expect(after).toMatch(/^[0-9a-f-]{36}$/);
    expect(after).not.toBe(before);
    await expect.poll(async () => (await run('systemctl is-active sleeper')).stdout, { timeout: 10_000 }).toBe('active\n');
    expect((await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim()).toBe(machineBootId);
  });
});
