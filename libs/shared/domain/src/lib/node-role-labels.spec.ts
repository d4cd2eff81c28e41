import { describe, expect, it } from 'vitest';
import { nodeRoleOf, parseAllowedNodeRoles, roleLabelRefusal } from './node-role-labels';

describe('node-role labels', () => {
  it.each([
    [{ key: 'node-role.kubernetes.io/worker', value: '' }, 'worker'],
    [{ key: 'node-role.kubernetes.io/control-plane', value: '' }, 'control-plane'],
    [{ key: 'node-role.kubernetes.io', value: 'master' }, 'master'],
    [{ key: 'disk-type', value: 'ssd' }, null],
  ])('reads the role of %j as kubectl does: %s', (label, role) => {
    expect(nodeRoleOf(label)).toBe(role);
  });

  it('reads ALLOW_NODE_ROLES, and never opens a control-plane role to OPERATORs', () => {
    expect(parseAllowedNodeRoles(undefined)).toEqual([]);
    expect(parseAllowedNodeRoles(' infra, storage ,infra')).toEqual(['infra', 'storage']);
    expect(() => parseAllowedNodeRoles('infra,master')).toThrow(/ALLOW_NODE_ROLES: "master" is a control-plane role/);
    expect(() => parseAllowedNodeRoles('control-plane')).toThrow(/control-plane role/);
    expect(() => parseAllowedNodeRoles('a/b')).toThrow(/"a\/b" is not a role name/);
  });

  it.each([
    ['OPERATOR', 'node-role.kubernetes.io/worker', null, null],
    ['OPERATOR', 'node-role.kubernetes.io/infra', null, null],
    ['OPERATOR', 'node-role.kubernetes.io/master', 'a reason', 'FORBIDDEN'],
    ['VIEWER', 'node-role.kubernetes.io/storage', null, 'FORBIDDEN'],
    ['ADMIN', 'node-role.kubernetes.io/control-plane', null, 'BAD_USER_INPUT'],
    ['ADMIN', 'node-role.kubernetes.io/control-plane', 'line one\u0007', 'BAD_USER_INPUT'],
    ['ADMIN', 'node-role.kubernetes.io/control-plane', 'new control-plane host, CHG-1', null],
  ] as const)('%s setting %s (reason %j): %s', (role, key, reason, code) => {
    expect(roleLabelRefusal([{ key, value: '' }], ['infra'], { role, reason }, 'input.roleLabelReason')?.code ?? null).toBe(code);
  });
});
