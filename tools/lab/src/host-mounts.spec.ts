import { describe, expect, it } from 'vitest';
import { checkMountOrder, hostDirs, hostMountPlan } from './host-mounts';

describe('host mount plan', () => {
  it('covers /run last so no source under the state folder is hidden', () => {
    const plan = hostMountPlan(hostDirs('/run/ccos-lab/hosts/h1'), '/run/ccos-lab/standins', [{ path: '/usr/bin/systemctl', standin: '/run/ccos-lab/standins/systemctl' }]);
    expect(() => checkMountOrder(plan)).not.toThrow();
    expect(plan.at(-1)).toMatchObject({ target: '/run' });
  });

  it('rejects a plan whose later source lies under an earlier target', () => {
    expect(() => checkMountOrder([
      { type: 'bind', source: '/tmp/lab/run', target: '/tmp' },
      { type: 'bind', source: '/tmp/lab/opt', target: '/opt' },
    ])).toThrow(/hidden by the earlier mount on \/tmp/);
  });
});
