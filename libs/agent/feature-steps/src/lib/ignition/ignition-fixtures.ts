/** Data URLs as the machine config server writes them. */
export function base64Url(text: string): string {
  return `data:text/plain;charset=utf-8;base64,${Buffer.from(text).toString('base64')}`;
}

export function percentUrl(text: string): string {
  return `data:,${encodeURIComponent(text)}`;
}

export const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIUe+/lab==\n-----END CERTIFICATE-----\n';
export const KUBELET_UNIT = '[Unit]\nDescription=Kubernetes Kubelet\n\n[Service]\nEnvironmentFile=-/etc/sysconfig/kubelet\nExecStart=/usr/local/bin/kubelet $KUBELET_EXTRA_ARGS\n\n[Install]\nWantedBy=multi-user.target\n';

/** The shape of the lab's (and a real MCS's) worker config, spec 3.2.0. */
export function workerConfig(): Record<string, unknown> {
  const file = (path: string, mode: number, source: string) => ({ path, mode, overwrite: true, user: { name: 'root' }, contents: { source } });
  return {
    ignition: { version: '3.2.0' },
    passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAA lab'] }] },
    storage: {
      directories: [{ path: '/etc/kubernetes/manifests', mode: 0o755, overwrite: true }],
      files: [
        file('/etc/kubernetes/kubeconfig', 0o600, base64Url('apiVersion: v1\nkind: Config\nusers: [{name: kubelet, user: {token: abcdef.0123456789abcdef}}]\n')),
        file('/etc/kubernetes/kubelet.conf', 0o644, base64Url('kind: KubeletConfiguration\nfailSwapOn: true\n')),
        file('/etc/kubernetes/kubelet-ca.crt', 0o644, percentUrl(CA_PEM)),
        file('/etc/kubernetes/cloud.conf', 0o644, 'data:,'),
        file('/etc/sysctl.d/99-kubernetes.conf', 0o644, base64Url('net.ipv4.ip_forward = 1\nvm.swappiness = 0\n')),
      ],
    },
    systemd: {
      units: [{
        name: 'kubelet.service',
        enabled: true,
        contents: KUBELET_UNIT,
        dropins: [{ name: '10-mco-default-env.conf', contents: '[Service]\nEnvironment="ENABLE_PROFILE_UNIX_SOCKET=false"\n' }],
      }],
    },
  };
}
