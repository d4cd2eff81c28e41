import { describe, expect, it } from 'vitest';
import { failed, ok } from '@ccos/agent/util-host/testing';
import { artifactBytes } from '../../testing/artifact-server';
import { stepHarness, type StepHarness } from '../../testing/step-harness';
import { InstallPackagesStep } from './install-packages.step';

const RPMS = Array.from({ length: 73 }, (_, i) => `pkg${String(i).padStart(2, '0')}-1.0-1.el9.x86_64.rpm`);
const DIR = '/opt/ccos-scaler/runs/run-1/rpms';

function withRpms(): StepHarness {
  const h = stepHarness();
  for (const name of RPMS) {
    h.server.add('rpm', name, artifactBytes(name, 2000));
  }
  h.exec
    .on(['rpm', '-q'], failed(1, 'package pkg00-1.0-1.el9.x86_64 is not installed\n'))
    .on(['rpm', '-qp'], (argv) => ok(argv.slice(4).map((file) => `${file.split('/').pop()?.replace(/\.rpm$/, '')}\n`).join('')))
    .on(['dnf', 'install'], ok('Dependencies resolved.\nComplete!\n'));
  return h;
}

describe('INSTALL_PACKAGES', () => {
  it('downloads the rpms and installs all of them in ONE dnf transaction', async () => {
    const h = withRpms();
    const result = await new InstallPackagesStep().run(h.ctx);
    expect(result).toMatchObject({ ok: true, message: 'installed 73 packages with dnf in one transaction' });
    const installs = h.exec.callsOf('dnf');
    expect(installs).toHaveLength(1);
    expect(installs[0]?.slice(0, 3)).toEqual(['dnf', 'install', '-y']);
    expect(installs[0]?.slice(3)).toEqual(RPMS.map((name) => `${DIR}/${name}`));
    // The transaction is never interrupted by a cancel.
    expect(h.exec.calls.find((call) => call.argv[0] === 'dnf')?.options.signal).toBeUndefined();
    expect(h.fs.node(DIR)).toBeUndefined();
    expect(h.progress.some((p) => p.message === 'installing 73 packages in one transaction (dnf install -y)')).toBe(true);
  });

  it('does nothing when rpm -q says every package is installed', async () => {
    const h = withRpms();
    h.exec.on(['rpm', '-q'], ok(''));
    const result = await new InstallPackagesStep().run(h.ctx);
    expect(result).toMatchObject({ ok: true, message: 'all 73 packages are installed already' });
    expect(h.server.seen.filter((r) => r.url.includes('/artifacts/rpm/'))).toHaveLength(0);
    expect(h.exec.callsOf('dnf')).toHaveLength(0);
    expect(h.exec.callsOf('rpm', '-q')[0]?.slice(2, 4)).toEqual(['pkg00-1.0-1.el9.x86_64', 'pkg01-1.0-1.el9.x86_64']);
  });

  it('asks the files themselves when their names are not name-version-release.arch', async () => {
    const h = withRpms();
    let queries = 0;
    h.exec.on(['rpm', '-q'], () => (queries++ === 0 ? failed(1, 'not installed') : ok('')));
    const result = await new InstallPackagesStep().run(h.ctx);
    expect(result).toMatchObject({ ok: true, message: 'all 73 packages are installed already' });
    expect(h.exec.callsOf('dnf')).toHaveLength(0);
  });

  it('fails with the command, exit code, diagnosed cause and output tail', async () => {
    const h = withRpms();
    const output = `Dependencies resolved.\n${'noise\n'.repeat(2000)}Error: \n Problem: conflicting requests\n  - nothing provides libseccomp.so.2 needed by cri-o-1.25.1\n`;
    h.exec.on(['dnf', 'install'], failed(1, output));
    const result = await new InstallPackagesStep().run(h.ctx);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe('RPM_MISSING_DEPENDENCY');
      expect(result.message).toBe('dnf install -y (73 rpm files) failed: exit code 1 — - nothing provides libseccomp.so.2 needed by cri-o-1.25.1');
      expect(result.command?.exitCode).toBe(1);
      expect(result.command?.output).toBe(output);
    }
    expect(h.fs.node(`${DIR}/${RPMS[0]}`)).toBeDefined();
  });

  it('uses yum where there is no dnf, and says when there is neither', async () => {
    const h = withRpms();
    h.exec.on(['dnf', 'install'], { exitCode: null, error: 'ENOENT' }).on(['yum', 'install'], ok('Complete!\n'));
    expect(await new InstallPackagesStep().run(h.ctx)).toMatchObject({ ok: true, message: 'installed 73 packages with yum in one transaction' });
    const bare = withRpms();
    bare.exec.on(['dnf', 'install'], { exitCode: null, error: 'ENOENT' });
    expect(await new InstallPackagesStep().run(bare.ctx)).toMatchObject({ ok: false, code: 'PACKAGE_TOOL_MISSING' });
  });
});
