import { message } from '@ccos/shared/messages';
import { AppError, BadUserInputError } from './app-errors';
import { checkWrittenReason } from './csr-policy';
import { type Role, roleAllows } from './roles';
import type { Label } from './validation';

/**
 * Node-role labels decide what a node attracts: `node-role.kubernetes.io/master` or
 * `control-plane` draws control-plane workloads (and the tokens they mount) to the machine. An
 * OPERATOR knows the machine's root password, so the roles an OPERATOR may give are the worker
 * role and an ADMIN's allow-list (`ALLOW_NODE_ROLES`); any other role needs an ADMIN and a reason,
 * which the audit log keeps with the request.
 * @see https://kubernetes.io/docs/reference/labels-annotations-taints/#node-role-kubernetes-io-control-plane
 */
export const NODE_ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';

/** The role every added host gets, which any OPERATOR may set. */
export const WORKER_NODE_ROLE = 'worker';

/** Roles no allow-list may open to OPERATORs. */
export const CONTROL_PLANE_NODE_ROLES: readonly string[] = ['master', 'control-plane'];

/** The variable an ADMIN lists further OPERATOR roles in; named in refusals. */
export const NODE_ROLES_VARIABLE = 'ALLOW_NODE_ROLES';

/**
 * The node role a label gives, as `kubectl get nodes` reads roles: `node-role.kubernetes.io/<role>`,
 * or the bare key `node-role.kubernetes.io` with the role as its value; null for other labels.
 */
export function nodeRoleOf(label: Label): string | null {
  if (label.key.startsWith(NODE_ROLE_LABEL_PREFIX)) {
    return label.key.slice(NODE_ROLE_LABEL_PREFIX.length);
  }
  return label.key === 'node-role.kubernetes.io' ? label.value : null;
}

/**
 * Parses `ALLOW_NODE_ROLES`: comma-separated role names OPERATORs may set besides `worker`.
 * Throws an Error naming an entry that is no role name, or a control-plane role.
 */
export function parseAllowedNodeRoles(raw: string | undefined): readonly string[] {
  const roles = (raw ?? '').split(',').map((part) => part.trim()).filter(Boolean);
  for (const role of roles) {
    if (!/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(role)) {
      throw new Error(`${NODE_ROLES_VARIABLE}: "${role}" is not a role name (the part after ${NODE_ROLE_LABEL_PREFIX})`);
    }
    if (CONTROL_PLANE_NODE_ROLES.includes(role)) {
      throw new Error(`${NODE_ROLES_VARIABLE}: "${role}" is a control-plane role; it always needs an ADMIN and a reason`);
    }
  }
  return [...new Set(roles)];
}

/** Who sets the labels, and why when the labels need it. */
export interface RoleLabelAuthority {
  readonly role: Role;
  readonly reason?: string | null;
}

/** The labels whose role an OPERATOR may not set: any role but the worker's and the allowed ones. */
export function restrictedRoleLabels(labels: readonly Label[], allowedRoles: readonly string[]): Label[] {
  return labels.filter((label) => {
    const role = nodeRoleOf(label);
    return role !== null && role !== WORKER_NODE_ROLE && !allowedRoles.includes(role);
  });
}

/**
 * Refuses node-role labels the caller may not set: FORBIDDEN (requiredRole ADMIN) below ADMIN,
 * BAD_USER_INPUT on `reasonField` for an ADMIN without a usable reason. Null when the labels may
 * be set. Every path that gives a node labels (addNode, addNodes, node groups) asks this.
 */
export function roleLabelRefusal(labels: readonly Label[], allowedRoles: readonly string[], authority: RoleLabelAuthority, reasonField: string): AppError | null {
  const [first] = restrictedRoleLabels(labels, allowedRoles);
  if (!first) {
    return null;
  }
  const role = nodeRoleOf(first) ?? '';
  if (!roleAllows(authority.role, 'ADMIN')) {
    const allowed = [WORKER_NODE_ROLE, ...allowedRoles].map((name) => NODE_ROLE_LABEL_PREFIX + name).join(', ');
    return new AppError('FORBIDDEN', message('node.roleLabel.needsAdmin', { key: first.key, nodeRole: role, held: authority.role, allowed, variable: NODE_ROLES_VARIABLE }), {
      requiredRole: 'ADMIN',
      field: 'labels',
    });
  }
  const problem = checkWrittenReason(authority.reason, message('node.roleLabel.reasonRequired', { key: first.key, nodeRole: role }));
  return problem ? new BadUserInputError(reasonField, problem) : null;
}
