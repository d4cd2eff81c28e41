import { describe, expect, it } from 'vitest';
import { FakeExecutor, MemoryFileSystem, failed, ok } from '@ccos/agent/util-host/testing';
import { readRunningKubelet } from './running-kubelet';

function host(cmdline: string, mainPid = '4242\n'): { exec: FakeExecutor; fs: MemoryFileSystem } {
  const exec = new FakeExecutor()
    .on(['uname', '-r'], ok('5.14.0-427.el9.x86_64\n'))
    .on(['systemctl', 'show', 'kubelet', '-p', 'MainPID'], ok(mainPid))
    .on(['/usr/local/bin/kubelet', '--version'], ok('Kubernetes v1.31.4+ccos.1\n'));
  const fs = new MemoryFileSystem();
  fs.seed({ '/proc/4242/cmdline': cmdline });
  return { exec, fs };
}

describe('readRunningKubelet', () => {
  it('reads the kernel, the flags systemd started kubelet with (secrets hidden) and that executable\'s version', async () => {
    const { exec, fs } = host('/usr/local/bin/kubelet\0--config=/etc/kubernetes/kubelet.conf\0--node-ip=198.18.0.5\0--bootstrap-token=abc.def\0');
    expect(await readRunningKubelet(exec, fs)).toEqual({
      kernelRelease: '5.14.0-427.el9.x86_64',
      kubeletVersion: 'v1.31.4+ccos.1',
      kubeletFlags: ['--config=/etc/kubernetes/kubelet.conf', '--node-ip=198.18.0.5', '--bootstrap-token=<redacted>'],
    });
  });

  it('takes the arguments after the kubelet executable when an interpreter runs it, and keeps an empty argument', async () => {
    const { exec, fs } = host('node\0/usr/local/bin/kubelet\0--node-labels\0\0--v=2\0');
    expect((await readRunningKubelet(exec, fs)).kubeletFlags).toEqual(['--node-labels', '', '--v=2']);
  });

  it('records what it can when kubelet is not running or nothing answers: null and no flags, never a throw', async () => {
    const stopped = host('', '0\n');
    stopped.exec.on(['kubelet', '--version'], failed(127));
    expect(await readRunningKubelet(stopped.exec, stopped.fs)).toEqual({ kernelRelease: '5.14.0-427.el9.x86_64', kubeletVersion: null, kubeletFlags: [] });
    const gone = host('', '777\n');
    gone.exec.on(['uname', '-r'], failed(1));
    expect(await readRunningKubelet(gone.exec, gone.fs)).toEqual({ kernelRelease: null, kubeletVersion: null, kubeletFlags: [] });
  });
});
