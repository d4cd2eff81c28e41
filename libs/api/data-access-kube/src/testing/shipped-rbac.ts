import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
// The identity is minted by the simulator (a TokenRequest as the cluster admin): a test-only
// dependency on a tool, confined to this folder.
import type { KubeSim } from '@ccos/tools/kube-sim';

/** The folder of the RBAC the deployment ships: what every managed cluster needs. */
export const SHIPPED_RBAC_DIR = resolve('deploy/base/rbac');

/** The service's account in every cluster, bound to the shipped roles by deploy/base/rbac/bindings.yaml. */
export const SHIPPED_SERVICE_ACCOUNT = { namespace: 'ccos-scaler', name: 'ccos-scaler' } as const;

/** The files of deploy/base/rbac in the order its kustomization lists them. */
export function shippedRbacFiles(): string[] {
  const kustomization = parse(readFileSync(join(SHIPPED_RBAC_DIR, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  return kustomization.resources.map((file) => join(SHIPPED_RBAC_DIR, file));
}

/**
 * Every object of deploy/base/rbac (the service's Namespace and ServiceAccount, its ClusterRole,
 * Lease Role, the bootstrap identities' Namespace, Role and binding, and the bindings to the
 * account), as a kube-sim seed (multi-document YAML). Its kustomization has no transformers, so
 * this is what `kubectl apply -k deploy/base/rbac` creates; test/deploy/manifests.test.ts checks so.
 */
export const SHIPPED_RBAC = shippedRbacFiles()
  .map((file) => readFileSync(file, 'utf8'))
  .join('\n---\n');

/**
 * The namespace, binding and Role the install runs' bootstrap identities need, read from the
 * file the deployment ships (a kube-sim seed), for worlds that only need the runs' side.
 */
export const BOOTSTRAP_IDENTITIES_RBAC = readFileSync(join(SHIPPED_RBAC_DIR, 'bootstrap-identities.yaml'), 'utf8');

/**
 * A kubeconfig of the service's account in `sim` — a cluster seeded with {@link SHIPPED_RBAC} —
 * with a TokenRequest token, as an operator makes it (`kubectl create token`) to register the
 * cluster: the identity the product runs as, bound to exactly the shipped roles.
 */
export function shippedIdentityKubeconfig(sim: KubeSim, expirationSeconds = 86_400): string {
  const token = sim.requestServiceAccountToken(SHIPPED_SERVICE_ACCOUNT.namespace, SHIPPED_SERVICE_ACCOUNT.name, { expirationSeconds });
  return sim.kubeconfigFor({ token }, SHIPPED_SERVICE_ACCOUNT.name);
}
