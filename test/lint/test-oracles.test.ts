import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * kube-sim and the lab (tag `role:test-oracle`) stand in for a cluster and for hosts: specs and
 * testing entry points may start them, product code may not, by one rule in eslint.config.js
 * rather than a disable comment per import.
 */
describe('lint: who may import a test oracle', () => {
  const eslint = new ESLint();
  const boundaryErrorsOf = async (filePath: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath });
    return (result?.messages ?? []).filter((message) => message.severity === 2 && message.ruleId === '@nx/enforce-module-boundaries').map((message) => message.message);
  };
  const importsKubeSim = "import { startKubeSim } from '@ccos/tools/kube-sim';\nexport const probe = startKubeSim;\n";
  const importsLab = "import { startLab } from '@ccos/tools/lab';\nexport const probe = startLab;\n";

  it.each([
    ['apps/api/src/app/probe.api.spec.ts', importsKubeSim],
    ['libs/api/feature-removals/src/lib/probe.spec.ts', importsKubeSim],
    ['libs/api/data-access-kube/src/testing/probe.ts', importsKubeSim],
    ['libs/api/data-access-ssh/src/lib/probe.spec.ts', importsLab],
  ])('lets test code start one: %s', async (filePath, code) => {
    expect(await boundaryErrorsOf(filePath, code)).toEqual([]);
  });

  it.each([
    ['apps/api/src/app/probe.ts', importsKubeSim],
    ['libs/api/feature-removals/src/lib/probe.ts', importsKubeSim],
    ['libs/api/data-access-ssh/src/lib/probe.ts', importsLab],
    ['libs/agent/feature-steps/src/lib/probe.ts', importsKubeSim],
  ])('refuses one in product code: %s', async (filePath, code) => {
    expect(await boundaryErrorsOf(filePath, code)).not.toEqual([]);
  });

  it('still refuses a product library in a spec across the layers (a feature spec importing another feature)', async () => {
    expect(await boundaryErrorsOf('libs/api/feature-removals/src/lib/probe.spec.ts', "import { CsrService } from '@ccos/api/feature-csrs';\nexport const probe = CsrService;\n")).not.toEqual([]);
  });
});
