import { afterAll, describe, expect, it } from 'vitest';
import { listLabs, startLab, stopLab } from '@ccos/tools/lab';
import { type LabProcess, labTraces, netnsInodes, startLabProcess } from './lab-process';
import { systemSsh } from './ssh-session';

/**
 * A lab whose owner died (SIGKILL) is cleaned up by the next start, and by
 * `lab prune` (stopLab without an id); a lab whose owner still runs is left
 * alone by both.
 */
describe('lab after a crash', () => {
  let survivor: LabProcess | undefined;

  afterAll(async () => {
    await survivor?.stop();
    await stopLab();
  });

  it('removes only the dead lab: on the next start and on prune', async () => {
    survivor = await startLabProcess(1, 'crash-survivor');
    const alive = survivor.lab;
    const aliveHost = alive.hosts[0];
    if (aliveHost === undefined) {
      throw new Error('expected a host');
    }
    const hostname = async () => (await systemSsh(aliveHost, { identityFile: alive.privateKeyPath }, 'hostname')).stdout;
    expect(await hostname()).toBe(`${aliveHost.hostname}\n`);

    const crashed = await startLabProcess(2, 'crash-victim');
    const crashedInodes = netnsInodes(crashed.lab);
    await crashed.kill();
    // The owner is dead but its hosts live on.
    expect(labTraces(crashed.lab, crashedInodes)).toEqual(expect.arrayContaining([`netns ${crashed.lab.namePrefix}h2`, `link ${crashed.lab.bridge}`]));
    expect((await listLabs()).find((lab) => lab.id === crashed.lab.id)?.owner.alive).toBe(false);

    const logged: string[] = [];
    const next = await startLab({ hosts: 1, name: 'crash-next', log: (message) => logged.push(message) });
    try {
      // Any lab start removes the dead labs: this one, or another test's that took the lock before it.
      if (!logged.some((line) => line.startsWith('waiting for the lab lock'))) {
        expect(logged.join('\n')).toContain(`removing the leftovers of lab ${crashed.lab.id}`);
      }
      expect(labTraces(crashed.lab, crashedInodes)).toEqual([]);
      expect((await listLabs()).map((lab) => lab.id)).not.toContain(crashed.lab.id);
      expect(await hostname()).toBe(`${aliveHost.hostname}\n`);
      const nextHost = next.hosts[0];
      if (nextHost !== undefined) {
        expect((await systemSsh(nextHost, { identityFile: next.privateKeyPath }, 'hostname')).stdout).toBe('h1\n');
      }
    } finally {
      await next.stop();
    }

    const pruned = await startLabProcess(2, 'crash-pruned');
    const prunedInodes = netnsInodes(pruned.lab);
    await pruned.kill();
    expect(await stopLab()).toEqual([pruned.lab.id]);
    expect(labTraces(pruned.lab, prunedInodes)).toEqual([]);
    expect(await hostname()).toBe(`${aliveHost.hostname}\n`);
    await expect(stopLab(alive.id)).rejects.toThrow(/still runs/);

    const aliveInodes = netnsInodes(alive);
    await survivor.stop();
    survivor = undefined;
    expect(labTraces(alive, aliveInodes)).toEqual([]);
  });
});
