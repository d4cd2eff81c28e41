import { type KubeClient, KubeApiError } from './kube-client';

/** A cluster's release version and where it was read. */
export interface ClusterVersionReading {
  /** e.g. `4.12.0` (OpenShift's desired release) or `1.32.0` (the Kubernetes server, without the `v`). */
  readonly version: string;
  readonly source: 'CLUSTER_VERSION' | 'SERVER_VERSION';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The release an OpenShift ClusterVersion names: `status.desired.version` (what the cluster runs or
 * is updating to, which is what new workers must match), else the newest completed history entry.
 * @see https://docs.openshift.com/container-platform/4.12/rest_api/config_apis/clusterversion-config-openshift-io-v1.html
 */
export function releaseOfClusterVersion(object: unknown): string | null {
  const status = isRecord(object) && isRecord(object['status']) ? object['status'] : null;
  const desired = status && isRecord(status['desired']) ? status['desired']['version'] : null;
  if (typeof desired === 'string' && desired.trim()) {
    return desired.trim();
  }
  const history = status && Array.isArray(status['history']) ? status['history'] : [];
  const completed = history.find((entry): entry is Record<string, unknown> => isRecord(entry) && entry['state'] === 'Completed' && typeof entry['version'] === 'string');
  return completed ? String(completed['version']).trim() || null : null;
}

/** `v1.32.0` → `1.32.0`; build metadata after `+` is not part of a release. */
export function releaseOfGitVersion(gitVersion: string): string {
  return gitVersion.trim().replace(/^v/, '').replace(/\+.*$/, '');
}

/**
 * Reads the cluster's release: OpenShift's ClusterVersion `version` when the cluster has one,
 * otherwise `GET /version`. Only an absent ClusterVersion (404) falls back to `/version`; a refusal
 * (the shipped ClusterRole grants `get` on clusterversions) and other failures are thrown.
 * @see https://kubernetes.io/docs/reference/using-api/health-checks/ (`/version` is public discovery)
 */
export async function readClusterVersion(client: KubeClient, signal?: AbortSignal): Promise<ClusterVersionReading> {
  try {
    const object = await client.call(
      'read ClusterVersion',
      (options) => client.customObjects.getClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'clusterversions', name: 'version' }, options),
      signal,
    );
    const release = releaseOfClusterVersion(object);
    if (release) {
      return { version: release, source: 'CLUSTER_VERSION' };
    }
  } catch (error) {
    // 404: not OpenShift. A 403 is not taken as "not OpenShift": on OpenShift /version names the
    // Kubernetes release, not the cluster's, so the missing permission is reported instead.
    if (!(error instanceof KubeApiError && error.statusCode === 404)) {
      throw error;
    }
  }
  const info = await client.call('read /version', (options) => client.versions.getCode(options), signal);
  return { version: releaseOfGitVersion(info.gitVersion), source: 'SERVER_VERSION' };
}
