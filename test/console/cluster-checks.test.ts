import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { RegisterClusterDocument } from '@ccos/shared/api-schema';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { E2E_ADMIN_PASSWORD, startApiProcess } from '../support/api-process';
import { type ApiAndKubeSim, useConsoleWorld } from '../support/console-world';

/**
 * The cluster page shows whether the cluster is ready for installs: on a cluster with
 * deploy/base/rbac but without the bootstrap identities' namespace, ✗ BOOTSTRAP_NAMESPACE with its
 * reason (in English and Chinese) and the manifest that fixes it; once that manifest is applied,
 * "Check again" shows every check passing.
 */
const SCREENSHOTS = 'tmp/console-cluster-checks-e2e';
const BOOTSTRAP_NAMESPACE = 'ccos-scaler-bootstrap';

const withoutBootstrapNamespace = parseAllDocuments(SHIPPED_RBAC)
  .map((document) => document.toJS() as { kind: string; metadata: { name: string; namespace?: string } })
  .filter((object) => object.metadata.namespace !== BOOTSTRAP_NAMESPACE && !(object.kind === 'Namespace' && object.metadata.name === BOOTSTRAP_NAMESPACE))
  .map((object) => stringify(object))
  .join('---\n');

async function startWorld(): Promise<ApiAndKubeSim> {
  const sim = await startKubeSim({ seed: withoutBootstrapNamespace });
  const api = await startApiProcess().catch(async (error: unknown) => {
    await sim.stop();
    throw error;
  });
  return {
    api,
    sim,
    stop: async () => {
      try {
        await api.stop();
      } finally {
        await sim.stop();
      }
    },
  };
}

/** `kubectl apply -f -` of a manifest as the cluster's admin (objects that exist stay as they are). */
function applyAsAdmin(sim: KubeSim, manifest: string): void {
  for (const document of parseAllDocuments(manifest)) {
    const object = document.toJS() as { kind: string; metadata: { name: string; namespace?: string } };
    if (!sim.store.get(sim.resource(`${object.kind.toLowerCase()}s`), object.metadata.namespace, object.metadata.name)) {
      sim.api.seed(sim.resource(`${object.kind.toLowerCase()}s`), object as never);
    }
  }
}

describe('console: cluster readiness checks', () => {
  const shared = useConsoleWorld({ start: startWorld, screenshots: SCREENSHOTS });
  let page: Page;
  let clusterUrl = '';

  beforeAll(async () => {
    ({ page } = shared);
    const { api, sim } = shared.world;
    const admin = await api.login();
    const registered = await api.gql(RegisterClusterDocument, { input: { name: 'edge', apiServerUrl: sim.url, vip: '198.18.0.2', kubeconfig: shippedIdentityKubeconfig(sim), csrAutoApprove: false } }, admin);
    expect(registered.errors).toBeUndefined();
    clusterUrl = `${api.url}/clusters/${registered.data?.registerCluster.id ?? ''}`;
    await page.goto(`${api.url}/sign-in`);
    await page.getByRole('textbox', { name: 'User name' }).fill('admin');
    await page.getByLabel(/^Password/).fill(E2E_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
  });

  it('shows the missing namespace with its fix, and every check passing after the fix', async () => {
    await page.goto(clusterUrl);
    const section = page.getByTestId('cluster-checks');
    await section.getByTestId('cluster-checks-state').filter({ hasText: 'Not ready: installs would fail' }).waitFor();
    const namespaceCheck = section.locator('[data-check="BOOTSTRAP_NAMESPACE"]');
    expect(await namespaceCheck.innerText()).toContain(`may not create ServiceAccounts in namespace ${BOOTSTRAP_NAMESPACE}`);
    expect(await namespaceCheck.locator('pre').innerText()).toContain(`kind: Namespace\nmetadata:\n  name: ${BOOTSTRAP_NAMESPACE}`);
    expect(await section.locator('[data-check="API_ACCESS"]').innerText()).toMatch(/^✓/);

    await page.getByRole('button', { name: '简体中文' }).click();
    await section.getByTestId('cluster-checks-state').filter({ hasText: '尚不能安装：安装将会失败' }).waitFor();
    expect(await namespaceCheck.innerText()).toContain(`无权在命名空间 ${BOOTSTRAP_NAMESPACE} 中创建 ServiceAccount`);
    await page.getByRole('button', { name: 'English' }).click();
    await section.getByTestId('cluster-checks-state').filter({ hasText: 'Not ready: installs would fail' }).waitFor();

    applyAsAdmin(shared.world.sim, await namespaceCheck.locator('pre').innerText());
    await section.getByRole('button', { name: 'Check again' }).click();
    await section.getByTestId('cluster-checks-state').filter({ hasText: /^\s*Ready\s*$/ }).waitFor();
    expect(await section.locator('[data-check] pre').count()).toBe(0);
    expect(await section.locator('[data-check]').count()).toBe(4);
  });
});
