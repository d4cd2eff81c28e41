import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { NodeEntity, NodeStore } from '@ccos/api/data-access-db';
import type { SshPool } from '@ccos/api/data-access-ssh';
import type { SecretBox } from '@ccos/api/util-secrets';
import { NodeProvisioner } from './node-provisioner';

describe('NodeProvisioner.schedule', () => {
  it('runs again when asked while the last provisioning of the node is still finishing, instead of dropping the request', async () => {
    const started: string[] = [];
    const finished: string[] = [];
    let finishFirst: () => void = () => undefined;
    const firstHeld = new Promise<void>((resolve) => (finishFirst = resolve));
    // Each provisioning reads the node, fails to reach it (no credentials here) and records the
    // failure; the first one is held in that last step, as a closing SSH session holds it.
    const nodes = {
      get: async (id: string) => {
        started.push(id);
        return { id, hostname: 'h1', status: 'ADDING', ip: '198.18.0.9', sshPort: 22 } as NodeEntity;
      },
      transition: async (id: string) => {
        if (finished.length === 0) {
          await firstHeld;
        }
        finished.push(id);
      },
    } as unknown as NodeStore;
    const agent = () => ({ path: '/agent', size: 1, sha256: 'a'.repeat(64), version: '1' });
    const provisioner = new NodeProvisioner(nodes, {} as SecretBox, {} as SshPool, agent, pino({ level: 'silent' }));

    provisioner.schedule('n1');
    await expect.poll(() => started).toEqual(['n1']);
    provisioner.schedule('n1');
    provisioner.schedule('n1');
    expect(started).toEqual(['n1']);
    finishFirst();
    await expect.poll(() => finished).toEqual(['n1', 'n1']);
    await expect.poll(() => provisioner.busy).toBe(false);
    expect(started).toEqual(['n1', 'n1']);
  });
});
