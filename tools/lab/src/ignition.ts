import { PRIVATE_PATHS, isWithin } from './host-mounts';
import { KUBELET_PATHS, bootstrapKubeconfig, kubeletConfig, kubeletUnit } from './kubelet-files';

/**
 * The worker Ignition config (spec 3.2.0) the machine config server stand-in
 * serves: the bootstrap kubeconfig for the API behind the VIP, the kubelet
 * configuration and CA, and kubelet.service, as the real MCS hands a new
 * worker. File contents are data URLs as in real configs: most base64, the
 * CA percent-encoded (`data:,...`), so an agent must handle both.
 *
 * @see https://coreos.github.io/ignition/configuration-v3_2/
 */
export const IGNITION_VERSION = '3.2.0';

/** The JSON shape of the parts of an Ignition config used here. */
export interface IgnitionConfig {
  readonly ignition: { readonly version: string };
  readonly passwd: { readonly users: readonly { readonly name: string; readonly sshAuthorizedKeys: readonly string[] }[] };
  readonly storage: {
    readonly directories: readonly { readonly path: string; readonly mode: number; readonly overwrite?: boolean }[];
    readonly files: readonly IgnitionFile[];
  };
  readonly systemd: {
    readonly units: readonly {
      readonly name: string;
      readonly enabled?: boolean;
      readonly contents?: string;
      readonly dropins?: readonly { readonly name: string; readonly contents: string }[];
    }[];
  };
}

/** One `storage.files` entry. */
export interface IgnitionFile {
  readonly path: string;
  readonly mode: number;
  readonly overwrite: boolean;
  readonly user: { readonly name: string };
  readonly contents: { readonly source: string };
}

/** What goes into the worker config. */
export interface WorkerConfigInput {
  readonly vip: string;
  /** The cluster CA (kube-sim's), PEM; absent without a kube-sim. */
  readonly clusterCaPem?: string;
  /** `tls-server-name` when the API certificate does not name the VIP. */
  readonly tlsServerName?: string;
  readonly bootstrapToken: string;
  readonly sshAuthorizedKeys: readonly string[];
}

/** Builds the worker config; every path it writes is private to each lab host. */
export function workerIgnitionConfig(input: WorkerConfigInput): IgnitionConfig {
  const files: IgnitionFile[] = [
    file(KUBELET_PATHS.bootstrapKubeconfig, 0o600, base64Url(bootstrapKubeconfig({
      vip: input.vip,
      caPem: input.clusterCaPem,
      tlsServerName: input.tlsServerName,
      token: input.bootstrapToken,
    }))),
    file(KUBELET_PATHS.config, 0o644, base64Url(kubeletConfig())),
    ...(input.clusterCaPem === undefined ? [] : [file(KUBELET_PATHS.caCert, 0o644, percentUrl(input.clusterCaPem))]),
    file('/etc/kubernetes/cloud.conf', 0o644, 'data:,'),
    file('/etc/sysctl.d/99-kubernetes.conf', 0o644, base64Url('net.ipv4.ip_forward = 1\nvm.swappiness = 0\n')),
  ];
  const config: IgnitionConfig = {
    ignition: { version: IGNITION_VERSION },
    passwd: { users: [{ name: 'core', sshAuthorizedKeys: input.sshAuthorizedKeys }] },
    storage: {
      directories: [{ path: '/etc/kubernetes/manifests', mode: 0o755, overwrite: true }],
      files,
    },
    systemd: {
      units: [{
        name: 'kubelet.service',
        enabled: true,
        contents: kubeletUnit(),
        dropins: [{ name: '10-mco-default-env.conf', contents: '[Service]\nEnvironment="ENABLE_PROFILE_UNIX_SOCKET=false"\n' }],
      }],
    },
  };
  assertPrivatePaths(config);
  return config;
}

/** Throws when the config would write a path that lab hosts share with the machine. */
export function assertPrivatePaths(config: IgnitionConfig): void {
  const paths = [
    ...config.storage.files.map((entry) => entry.path),
    ...config.storage.directories.map((entry) => entry.path),
    ...config.systemd.units.map((unit) => `/etc/systemd/system/${unit.name}`),
  ];
  for (const path of paths) {
    if (!PRIVATE_PATHS.some((dir) => isWithin(path, dir))) {
      throw new Error(`Ignition config writes ${path}, which lab hosts share with the machine`);
    }
  }
}

function file(path: string, mode: number, source: string): IgnitionFile {
  return { path, mode, overwrite: true, user: { name: 'root' }, contents: { source } };
}

function base64Url(text: string): string {
  return `data:text/plain;charset=utf-8;base64,${Buffer.from(text).toString('base64')}`;
}

function percentUrl(text: string): string {
  return `data:,${encodeURIComponent(text)}`;
}
