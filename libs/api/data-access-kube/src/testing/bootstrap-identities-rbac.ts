import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The namespace, binding and Role the install runs' bootstrap identities need, read from the
 * file the deployment ships, so the tests seed exactly what an operator applies. As a kube-sim
 * seed (multi-document YAML).
 */
export const BOOTSTRAP_IDENTITIES_RBAC = readFileSync(resolve('deploy/rbac/bootstrap-identities.yaml'), 'utf8');
