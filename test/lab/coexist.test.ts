import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { listLabs, startLab, subnetContains, type Lab, type LabDescription, type LabHost } from '@ccos/tools/lab';
import { type LabProcess, labTraces, netnsInodes, startLabProcess } from './lab-process';
import { connectSsh } from './ssh-session';

/**
 * Labs side by side: two labs started at the same moment from two
 * processes both come up on their own slices, and a host of one refuses
 * logins from the other's gateway; a third one's start, a fault and a stop in
 * one lab leave the others' hosts untouched (same sshd, same files, still reachable).
 */
describe('two labs at once', () => {
  let other: LabProcess | undefined;
  let mine: Lab | undefined;

  afterAll(async () => {
    await mine?.stop();
    await other?.stop();
  });

  /** What proves a host is the same host: its hostname, address, sshd pid and a file it keeps. */
  async function hostState(lab: LabDescription, host: LabHost): Promise<string> {
    const session = await connectSsh(host, { privateKey: await readFile(lab.privateKeyPath) });
    try {
      const result = await session.exec('hostname; ip -4 -o addr show eth0 | awk \'{print $4}\'; cat /run/sshd.pid; cat /root/owner 2>/dev/null || echo none');
      expect(result.code, result.stderr).toBe(0);
      return result.stdout;
    } finally {
      session.close();
    }
  }

  async function markHosts(lab: LabDescription): Promise<void> {
    const privateKey = await readFile(lab.privateKeyPath);
    await Promise.all(lab.hosts.map(async (host) => {
      const session = await connectSsh(host, { privateKey });
      expect((await session.exec(`echo ${lab.id} > /root/owner`)).code).toBe(0);
      session.close();
    }));
  }

  const statesOf = (lab: LabDescription) => Promise.all(lab.hosts.map((host) => hostState(lab, host)));

  it('brings both up on their own slices, and neither touches the other\'s hosts', async () => {
    [other, mine] = await Promise.all([startLabProcess(3, 'coexist-other'), startLab({ hosts: 3, name: 'coexist-mine' })]);
    const theirs = other.lab;
    expect(theirs.id).not.toBe(mine.id);
    expect(theirs.bridge).not.toBe(mine.bridge);
    for (const [lab, peer] of [[theirs, mine], [mine, theirs]] as const) {
      for (const ip of [lab.gateway, lab.vip, ...lab.hosts.map((host) => host.ip), ...lab.unassignedIps]) {
        expect(subnetContains(lab.subnet, ip), `${ip} in ${lab.subnet}`).toBe(true);
        expect(subnetContains(peer.subnet, ip), `${ip} not in ${peer.subnet}`).toBe(false);
      }
    }
    expect((await listLabs()).filter((lab) => [theirs.id, mine?.id].includes(lab.id)).map((lab) => lab.owner.alive)).toEqual([true, true]);

    // Every host of both answers SSH as itself, at its own address.
    await Promise.all([markHosts(theirs), markHosts(mine)]);
    const theirsBefore = await statesOf(theirs);
    const mineBefore = await statesOf(mine);
    theirs.hosts.forEach((host, index) => expect(theirsBefore[index]).toMatch(new RegExp(`^${host.hostname}\\n${host.ip.replaceAll('.', '\\.')}/\\d+\\n\\d+\\n${theirs.id}\\n$`)));
    mine.hosts.forEach((host, index) => expect(mineBefore[index]).toMatch(new RegExp(`^${host.hostname}\\n${host.ip.replaceAll('.', '\\.')}/\\d+\\n\\d+\\n${mine?.id ?? ''}\\n$`)));

    // A host takes logins from its own lab's gateway only: from the other lab's, the right key is refused.
    const myHost = mine.hosts[0] as LabHost;
    await expect(connectSsh(myHost, { privateKey: await readFile(mine.privateKeyPath) }, 10_000, theirs.gateway)).rejects.toThrow(/authentication methods failed/i);
    await expect(connectSsh(myHost, { password: myHost.password }, 10_000, theirs.gateway)).rejects.toThrow(/authentication methods failed/i);
    (await connectSsh(myHost, { privateKey: await readFile(mine.privateKeyPath) }, 10_000, mine.gateway)).close();

    // A third lab's start (which cleans up dead labs) and stop change neither.
    const third = await startLab({ hosts: 1, name: 'coexist-third' });
    expect([theirs.subnet, mine.subnet]).not.toContain(third.subnet);
    await third.stop();
    expect(await statesOf(theirs)).toEqual(theirsBefore);
    expect(await statesOf(mine)).toEqual(mineBefore);

    // Both labs have an h1: cutting mine leaves theirs reachable.
    await mine.faults.cutLink('h1');
    try {
      await expect(connectSsh(mine.hosts[0] as LabHost, { privateKey: await readFile(mine.privateKeyPath) }, 1500)).rejects.toThrow(/timed out/i);
      expect(await statesOf(theirs)).toEqual(theirsBefore);
    } finally {
      await mine.faults.restoreLink('h1');
    }

    // Stopping mine removes all of it and nothing of theirs.
    const mineDescription = mine.description;
    const mineInodes = netnsInodes(mineDescription);
    await mine.stop();
    mine = undefined;
    expect(labTraces(mineDescription, mineInodes)).toEqual([]);
    expect(await statesOf(theirs)).toEqual(theirsBefore);
    expect(labTraces(theirs)).toEqual(expect.arrayContaining([`link ${theirs.bridge}`, `folder ${theirs.stateDir}`]));

    const theirsInodes = netnsInodes(theirs);
    await other.stop();
    other = undefined;
    expect(labTraces(theirs, theirsInodes)).toEqual([]);
  });
});
