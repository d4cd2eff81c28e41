import { describe, expect, it } from 'vitest';
import { decideHostVerdict } from '@ccos/shared/domain';
import { useNodeGroupWorld } from '../testing/node-group-world';

describe('member reconciler: each member moves along its node record', () => {
  const world = useNodeGroupWorld();

  it('makes a host a spare when addNode\'s checks end, whether they end before or after it joins the group', async () => {
    const group = await world().createGroup('checks');
    const early = await world().addSpare(group, 'checks-1');
    expect(await world().memberState(early)).toBe('SPARE');

    world().ports.nextAdd = { status: 'ADDING', arch: 'x86_64', verdict: null };
    const late = await world().addSpare(group, 'checks-2');
    expect(await world().memberState(late)).toBe('CHECKING');
    // The node change alone moves it: nobody calls the reconciler.
    await world().drive(late, 'AGENT_COPIED');
    await expect.poll(() => world().activity(group)).toEqual(['SPARE_ADDED checks-1', 'SPARE_READY checks-1', 'SPARE_ADDED checks-2', 'SPARE_READY checks-2']);
    expect(await world().memberState(late)).toBe('SPARE');
  });

  it('leaves out a host of the wrong architecture, a host with leftovers (a new spare must be clean, not cleanable) and a host whose checks failed, each with its reason', async () => {
    const group = await world().createGroup('unusable');
    world().ports.nextAdd = { status: 'READY_TO_INSTALL', arch: 'aarch64', verdict: null };
    const arm = await world().addSpare(group, 'unusable-arm');
    world().ports.nextAdd = { status: 'READY_TO_INSTALL', arch: 'x86_64', verdict: decideHostVerdict([{ kind: 'KUBELET_CERTIFICATES', item: '/var/lib/kubelet/pki/kubelet-client-current.pem' }]) };
    const dirty = await world().addSpare(group, 'unusable-dirty');
    world().ports.nextAdd = { status: 'ADDING', arch: 'x86_64', verdict: null };
    const unreachable = await world().addSpare(group, 'unusable-gone');
    await world().drive(unreachable, 'SSH_UNREACHABLE');
    world().ports.nextAdd = { status: 'READY_TO_INSTALL', arch: 'x86_64', verdict: null };

    await expect.poll(() => world().memberState(unreachable)).toBe('UNUSABLE');
    const members = new Map((await world().store.membersOf(group.id)).map((row) => [row.nodeId, row]));
    expect(members.get(arm)).toMatchObject({ state: 'UNUSABLE', reasonCoded: { code: 'autoscaling.member.wrongArch', params: { arch: 'aarch64', wanted: 'amd64' } } });
    expect(members.get(dirty)).toMatchObject({ state: 'REINSTALL_REQUIRED', reasonCoded: { code: 'autoscaling.member.dirty', params: { verdict: 'CLEANABLE' } } });
    expect(members.get(unreachable)).toMatchObject({ state: 'UNUSABLE', reasonCoded: { code: 'autoscaling.member.checksFailed' } });
    expect((await world().activity(group)).filter((entry) => !entry.startsWith('SPARE_ADDED'))).toEqual(['SPARE_UNUSABLE unusable-arm', 'REINSTALL_REQUIRED unusable-dirty', 'SPARE_UNUSABLE unusable-gone']);
  });

  it('leaves out a host smaller than the group\'s profile, naming each failed validation; one that meets it becomes a spare', async () => {
    const group = await world().createGroup('profile');
    const hardware = (cpus: number, memoryGiB: number) => ({ cpus, cpuModel: null, memoryBytes: memoryGiB * 2 ** 30, disks: [], nics: [], systemVendor: null, systemProduct: null, systemSerial: null });
    // The world's groups promise 2 CPUs and 4 GiB.
    world().ports.nextAdd = { status: 'READY_TO_INSTALL', arch: 'x86_64', verdict: null, hardware: hardware(1, 1.5) };
    const small = await world().addSpare(group, 'profile-small');
    world().ports.nextAdd = { status: 'READY_TO_INSTALL', arch: 'x86_64', verdict: null, hardware: hardware(2, 4) };
    const fits = await world().addSpare(group, 'profile-fits');
    world().ports.nextAdd = { status: 'READY_TO_INSTALL', arch: 'x86_64', verdict: null };

    await expect.poll(() => world().memberState(small)).toBe('UNUSABLE');
    const member = (await world().store.membersOf(group.id)).find((row) => row.nodeId === small);
    expect(member?.reasonCoded).toEqual({ code: 'autoscaling.member.belowProfile', params: { group: 'profile', validations: 'has-min-cpu-cores: 1 < 2; has-min-memory: 1.5 GiB < 4 GiB' } });
    expect(await world().memberState(fits)).toBe('SPARE');
  });

  it('runs a reserved host once it joins, records a failed install once however often it is reconciled, and reserves it again on retry', async () => {
    const group = await world().createGroup('install');
    const member = await world().addSpare(group, 'install-1');
    await world().groups.scaling.increaseSize(world().clusterId, 'install', 1);
    await world().drive(member, 'INSTALL_STARTED', 'INSTALL_FAILED');
    await expect.poll(() => world().activity(group)).toContain('INSTALL_FAILED install-1');
    await world().groups.members.reconcileNode(member);
    await world().groups.members.reconcileAll();
    expect((await world().activity(group)).filter((entry) => entry.startsWith('INSTALL_FAILED'))).toHaveLength(1);
    expect((await world().store.member(member))?.reasonCoded?.code).toBe('autoscaling.member.installFailed');

    await world().drive(member, 'INSTALL_RETRIED');
    await expect.poll(async () => (await world().store.member(member))?.reasonCoded?.code).toBe('autoscaling.member.reserved');
    await world().drive(member, 'NODE_READY');
    await expect.poll(() => world().activity(group)).toContain('INSTALLED install-1');
    expect(await world().memberState(member)).toBe('RUNNING');
  });

  it('retires a running member whose Node left the cluster', async () => {
    const group = await world().createGroup('vanish');
    const member = await world().addSpare(group, 'vanish-1');
    await world().groups.scaling.increaseSize(world().clusterId, 'vanish', 1);
    await world().drive(member, 'INSTALL_STARTED', 'NODE_READY');
    await expect.poll(() => world().memberState(member)).toBe('RUNNING');
    await world().drive(member, 'NODE_VANISHED');
    await expect.poll(() => world().memberState(member)).toBe('RETIRED');
    expect(await world().groups.registry.membersOf(group.id)).toEqual([]);
  });

  it('settles on start what changed while it was stopped', async () => {
    const group = await world().createGroup('restart');
    world().ports.nextAdd = { status: 'ADDING', arch: 'x86_64', verdict: null };
    const member = await world().addSpare(group, 'restart-1');
    world().ports.nextAdd = { status: 'READY_TO_INSTALL', arch: 'x86_64', verdict: null };
    await world().groups.members.stop();
    await world().drive(member, 'AGENT_COPIED');
    expect(await world().memberState(member)).toBe('CHECKING');

    const restarted = await world().startAnother();
    try {
      expect(await world().memberState(member)).toBe('SPARE');
    } finally {
      await restarted.stop();
    }
  });
});
