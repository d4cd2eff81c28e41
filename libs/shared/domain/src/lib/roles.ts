/** Roles, weakest first: each role may do everything the ones before it may. */
export const ROLES = ['VIEWER', 'OPERATOR', 'ADMIN'] as const;
export type Role = (typeof ROLES)[number];

/** Whether a user holding `held` may do what needs `required`. */
export function roleAllows(held: Role, required: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(required);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
