import { describe, expect, it } from 'vitest';
import { describeStep } from '@ccos/shared/domain';
import { formatMessage } from '@ccos/shared/messages';
import { diagnose } from './failure-codes';

const fallback = { code: 'KUBELET_DIED' as const, hint: describeStep('START_KUBELET').hint };

describe('diagnose', () => {
  it.each([
    ['START_KUBELET', 'E1201 run.go:74] "command failed" err="failed to run Kubelet: running with swap on is not supported, please disable swap!"', 'KUBELET_SWAP_ON'],
    ['START_KUBELET', 'command failed err="failed to run Kubelet: unable to load bootstrap kubeconfig: stat /etc/kubernetes/kubeconfig: no such file or directory"', 'KUBELET_BOOTSTRAP_KUBECONFIG'],
    ['START_KUBELET', "Failed to validate kubelet flags err=\"unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [kubernetes.io/role]\"", 'KUBELET_INVALID_FLAGS'],
    ['START_KUBELET', 'Post "https://198.18.0.2:6443/apis/certificates.k8s.io/v1/certificatesigningrequests": dial tcp 198.18.0.2:6443: connect: connection refused', 'KUBELET_API_UNREACHABLE'],
    ['START_KUBELET', 'x509: certificate has expired or is not yet valid: current time 2026-12-01 is after 2026-11-30', 'CERT_EXPIRED'],
    ['START_KUBELET', 'the server has asked for the client to provide credentials (Unauthorized)', 'KUBELET_UNAUTHORIZED'],
    ['INSTALL_PACKAGES', ' Problem: conflicting requests\n  - nothing provides libfoo.so.1 needed by cri-o-1.25.1', 'RPM_MISSING_DEPENDENCY'],
    ['INSTALL_PACKAGES', 'file /usr/bin/runc from install of runc-1.1 conflicts with file from package containerd.io', 'RPM_CONFLICT'],
    ['INSTALL_PACKAGES', 'Can not load RPM file: /opt/x.rpm.\nCould not open: /opt/x.rpm', 'RPM_CORRUPT'],
    ['INSTALL_PACKAGES', 'Waiting for process with pid 4242 to finish.', 'RPM_DB_LOCKED'],
    ['INSTALL_PACKAGES', 'error: Couldn\'t create temporary file: No space left on device', 'DISK_FULL'],
    ['INSTALL_SERVICES', 'Failed to enable unit: Unit file foo.service does not exist.', 'UNIT_REJECTED'],
  ] as const)('%s: %s → %s', (step, text, code) => {
    expect(diagnose(step, text, fallback).code).toBe(code);
  });

  it('keeps kubelet patterns to kubelet output and falls back when nothing is known', () => {
    expect(diagnose('INSTALL_PACKAGES', 'dial tcp: connection refused', fallback).code).toBe('KUBELET_DIED');
    expect(diagnose('START_KUBELET', 'all quiet', fallback)).toEqual({ ...fallback, evidence: null });
  });

  it('prefers the last matching line and quotes it as evidence', () => {
    const found = diagnose('START_KUBELET', 'dial tcp 1.2.3.4:6443: i/o timeout\nrunning with swap on is not supported', fallback);
    expect(found).toMatchObject({ code: 'KUBELET_SWAP_ON', evidence: 'running with swap on is not supported' });
  });

  it('gives its hints by code, so the node page shows them in Chinese', () => {
    const { hint } = diagnose('INSTALL_PACKAGES', 'file /usr/bin/runc from install of runc-1.1 conflicts with file from package containerd.io', fallback);
    expect(hint.message).toBe('An installed package conflicts with the artifact set: remove or upgrade it on the host (`rpm -qa | grep <name>`), then retry.');
    expect(formatMessage('zh-CN', hint.code, hint.params)).toBe('已安装的软件包与制品冲突：请在主机上卸载或升级它（`rpm -qa | grep <name>`），然后重试。');
  });
});
