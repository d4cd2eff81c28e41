/** The authenticated caller, as the API server's user.Info. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** The identity of unauthenticated requests when anonymous access is allowed. */
export const ANONYMOUS_USER: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
