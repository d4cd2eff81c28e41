import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BootstrapKubeconfigError, bootstrapKubeconfigPath, withBootstrapToken } from './bootstrap-kubeconfig';

const OPENSHIFT_UNIT = `# /etc/systemd/system/kubelet.service
[Service]
ExecStart=/usr/local/bin/kubelet \\
    --config=/etc/kubernetes/kubelet.conf \\
    --bootstrap-kubeconfig=/etc/kubernetes/kubeconfig \\
    --kubeconfig=/var/lib/kubelet/kubeconfig \\
    $KUBELET_EXTRA_ARGS

# /etc/systemd/system/kubelet.service.d/10-mco-default-env.conf
[Service]
Environment="ENABLE_PROFILE_UNIX_SOCKET=false"
`;

const KUBEADM_UNIT = `# /usr/lib/systemd/system/kubelet.service
[Service]
ExecStart=/usr/bin/kubelet

# /usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS
`;

const IGNITION_KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
  - name: local
    cluster:
      server: https://198.18.0.2:6443
      certificate-authority-data: LS0tLS1CRUdJTg==
      tls-server-name: kubernetes
contexts:
  - name: kubelet
    context: { cluster: local, user: kubelet }
current-context: kubelet
users:
  - name: kubelet
    user: { token: abcdef.0123456789abcdef }
`;

describe('the kubelet bootstrap kubeconfig', () => {
  it.each([
    ['an OpenShift-style unit', OPENSHIFT_UNIT, '/etc/kubernetes/kubeconfig'],
    ['kubeadm\'s drop-in (flags in an Environment= line)', KUBEADM_UNIT, '/etc/kubernetes/bootstrap-kubelet.conf'],
    ['a unit without one', '[Service]\nExecStart=/usr/bin/kubelet --kubeconfig=/var/lib/kubelet/kubeconfig\n', null],
    ['a relative path', '[Service]\nExecStart=/usr/bin/kubelet --bootstrap-kubeconfig kubeconfig\n', null],
  ])('finds the path in %s', (_what, unit, path) => {
    expect(bootstrapKubeconfigPath(unit)).toBe(path);
  });

  it('swaps the shared credential for the run\'s token and keeps the server, its CA and TLS server name', () => {
    const written = parse(withBootstrapToken(IGNITION_KUBECONFIG, 'eyJhbGciOiJFUzI1NiJ9.run.token')) as Record<string, unknown>;
    expect(written).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster: { server: 'https://198.18.0.2:6443', 'certificate-authority-data': 'LS0tLS1CRUdJTg==', 'tls-server-name': 'kubernetes' } }],
      contexts: [{ name: 'kubelet', context: { cluster: 'local', user: 'ccos-scaler-install-run' } }],
      'current-context': 'kubelet',
      users: [{ name: 'ccos-scaler-install-run', user: { token: 'eyJhbGciOiJFUzI1NiJ9.run.token' } }],
    });
    expect(JSON.stringify(written)).not.toContain('abcdef.0123456789abcdef');
  });

  it.each([
    ['not YAML', 'clusters: [', /^it is not valid YAML \(/],
    ['no cluster server', 'apiVersion: v1\nkind: Config\ncontexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n', /^it names no current context with a cluster and its server$/],
    ['an empty file', '', /^it is not a kubeconfig$/],
  ])('refuses %s', (_what, text, message) => {
    expect(() => withBootstrapToken(text, 'token')).toThrow(BootstrapKubeconfigError);
    expect(() => withBootstrapToken(text, 'token')).toThrow(message);
  });
});
