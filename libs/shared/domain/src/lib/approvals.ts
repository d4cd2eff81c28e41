import type { Role } from './roles';

/** The actions a cluster with four-eyes on holds for a second person's approval. */
export const APPROVAL_ACTIONS = ['REMOVE_NODE', 'SKIP_REMOVAL_HOST_SIDE', 'FORCE_REMOVAL_DRAIN', 'FORCE_APPROVE_CSR', 'START_ROLLOUT'] as const;
export type ApprovalAction = (typeof APPROVAL_ACTIONS)[number];

/** The role each action needs, which its approver must hold too. */
export const APPROVAL_ROLE: Readonly<Record<ApprovalAction, Role>> = {
  REMOVE_NODE: 'OPERATOR',
  SKIP_REMOVAL_HOST_SIDE: 'OPERATOR',
  FORCE_REMOVAL_DRAIN: 'ADMIN',
  FORCE_APPROVE_CSR: 'ADMIN',
  START_ROLLOUT: 'OPERATOR',
};

/**
 * Whether a removal with these options waits for a second person on such a cluster: forced
 * (pods without a controller are deleted for good) or ungraceful (a dead node's pods deleted at once).
 */
export function removalNeedsSecondPerson(options: { readonly force: boolean; readonly ungraceful: boolean }): boolean {
  return options.force || options.ungraceful;
}
