import { stringify } from 'yaml';
import { kubeconfigYaml } from './kube/kubeconfig';
import { API_PORT } from './lab-layout';

/**
 * The files that make the kubelet run on a worker, laid out as on an
 * OpenShift worker: the unit runs the downloaded /usr/local/bin/kubelet
 * with the KubeletConfiguration in /etc/kubernetes/kubelet.conf, the
 * bootstrap kubeconfig /etc/kubernetes/kubeconfig, and writes its own
 * kubeconfig to /var/lib/kubelet/kubeconfig after TLS bootstrap. Extra flags
 * (labels, taints) go into KUBELET_EXTRA_ARGS in /etc/sysconfig/kubelet, as
 * the seed guide does.
 */
export const KUBELET_PATHS = {
  binary: '/usr/local/bin/kubelet',
  unit: '/etc/systemd/system/kubelet.service',
  config: '/etc/kubernetes/kubelet.conf',
  bootstrapKubeconfig: '/etc/kubernetes/kubeconfig',
  kubeconfig: '/var/lib/kubelet/kubeconfig',
  caCert: '/etc/kubernetes/kubelet-ca.crt',
  extraArgs: '/etc/sysconfig/kubelet',
  certDir: '/var/lib/kubelet/pki',
} as const;

/** kubelet.service, the same in the artifacts and in the Ignition config. */
export function kubeletUnit(): string {
  return [
    '[Unit]',
    'Description=Kubernetes Kubelet',
    'Documentation=https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/',
    'Wants=network-online.target',
    'After=network-online.target ccos-node-init.service',
    '',
    '[Service]',
    'Type=simple',
    `EnvironmentFile=-${KUBELET_PATHS.extraArgs}`,
    'Environment="KUBELET_LOG_LEVEL=2"',
    'ExecStartPre=/bin/mkdir --parents /etc/kubernetes/manifests /var/lib/kubelet',
    `ExecStart=${KUBELET_PATHS.binary} \\`,
    `    --config=${KUBELET_PATHS.config} \\`,
    `    --bootstrap-kubeconfig=${KUBELET_PATHS.bootstrapKubeconfig} \\`,
    `    --kubeconfig=${KUBELET_PATHS.kubeconfig} \\`,
    `    --cert-dir=${KUBELET_PATHS.certDir} \\`,
    '    --container-runtime-endpoint=/var/run/crio/crio.sock \\',
    '    --node-labels=node-role.kubernetes.io/worker,node.openshift.io/os_id=ccos \\',
    '    --v=${KUBELET_LOG_LEVEL} \\',
    '    $KUBELET_EXTRA_ARGS',
    'Restart=always',
    'RestartSec=10',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** A oneshot unit that prepares kubelet's folders (the "install operations as services" of the seed design). */
export function nodeInitUnit(): string {
  return [
    '[Unit]',
    'Description=CCOS node preparation',
    'Before=kubelet.service',
    '',
    '[Service]',
    'Type=oneshot',
    'RemainAfterExit=yes',
    'ExecStart=/bin/mkdir --parents /etc/kubernetes/manifests /var/lib/kubelet /var/log/kubelet',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** /etc/kubernetes/kubelet.conf (KubeletConfiguration). */
export function kubeletConfig(): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    authentication: {
      x509: { clientCAFile: KUBELET_PATHS.caCert },
      anonymous: { enabled: false },
      webhook: { enabled: true, cacheTTL: '0s' },
    },
    authorization: { mode: 'Webhook' },
    cgroupDriver: 'systemd',
    clusterDNS: ['172.30.0.10'],
    clusterDomain: 'cluster.local',
    failSwapOn: true,
    maxPods: 250,
    nodeStatusUpdateFrequency: '10s',
    nodeStatusReportFrequency: '5m',
    rotateCertificates: true,
    serverTLSBootstrap: true,
    systemReserved: { cpu: '500m', memory: '1Gi', 'ephemeral-storage': '1Gi' },
  });
}

/** /etc/kubernetes/kubeconfig: the bootstrap kubeconfig (token) for the API behind the VIP. */
export function bootstrapKubeconfig(options: {
  readonly vip: string;
  readonly caPem?: string;
  readonly tlsServerName?: string;
  readonly token: string;
}): string {
  return kubeconfigYaml({
    server: `https://${options.vip}:${API_PORT}`,
    caPem: options.caPem,
    tlsServerName: options.tlsServerName,
    user: { token: options.token },
    clusterName: 'local',
    userName: 'kubelet',
  });
}
