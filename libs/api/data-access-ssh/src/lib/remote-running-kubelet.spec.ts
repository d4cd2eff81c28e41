import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRunningKubelet, runningKubeletCheck } from './remote-running-kubelet';
import { scriptArgv } from './remote-script';

const run = promisify(execFile);

/**
 * The script in this machine's sh, with a `kubelet` (a shell script, so the kernel shows it started
 * through an interpreter) running under the given arguments and a `systemctl` that names its pid.
 */
describe('runningKubeletCheck', () => {
  let dir: string;
  let kubelet: ChildProcess;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'running-kubelet-'));
    await writeFile(join(dir, 'kubelet'), '#!/bin/sh\nif [ "$1" = --version ]; then echo "Kubernetes v1.31.4+lab"; exit 0; fi\nwhile :; do sleep 1; done\n');
    await chmod(join(dir, 'kubelet'), 0o755);
    kubelet = spawn('/bin/sh', [join(dir, 'kubelet'), '--config=/etc/kubernetes/kubelet.conf', '--bootstrap-token=abc.def', '--node-labels', 'a=b c'], { stdio: 'ignore' });
    // Until the child has exec'd, its cmdline is still this process's.
    while (!(await readFile(`/proc/${kubelet.pid}/cmdline`, 'utf8').catch(() => '')).includes(join(dir, 'kubelet'))) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await writeFile(join(dir, 'systemctl'), `#!/bin/sh\necho ${kubelet.pid}\n`);
    await chmod(join(dir, 'systemctl'), 0o755);
  });
  afterAll(async () => {
    kubelet?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  const runCheck = async (path: string) => {
    const check = runningKubeletCheck();
    const [command = 'sh', ...args] = scriptArgv(check.script, check.args);
    const { stdout } = await run(command, args, { env: { PATH: path } });
    return check.read({ stdout } as never, 'local');
  };

  it('reads the kernel, the running kubelet\'s arguments after its executable (secrets hidden) and that executable\'s version', async () => {
    expect(await runCheck(`${dir}:/usr/bin:/bin`)).toEqual({
      kernelRelease: (await run('uname', ['-r'])).stdout.trim(),
      kubeletVersion: 'v1.31.4+lab',
      kubeletFlags: ['--config=/etc/kubernetes/kubelet.conf', '--bootstrap-token=<redacted>', '--node-labels', 'a=b c'],
    });
  });

  it('says what it cannot read as null or no flags: no kubelet running, none installed', async () => {
    await writeFile(join(dir, 'systemctl'), '#!/bin/sh\necho 0\n');
    expect(await runCheck('/usr/bin:/bin')).toEqual({ kernelRelease: (await run('uname', ['-r'])).stdout.trim(), kubeletVersion: null, kubeletFlags: [] });
    expect(parseRunningKubelet('')).toEqual({ kernelRelease: null, kubeletVersion: null, kubeletFlags: [] });
  });
});
