import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import {
  CreateUserDocument,
  type CreateUserInput,
  DeleteUserDocument,
  DisableUserDocument,
  EnableUserDocument,
  RevokeAllSessionsDocument,
  RevokeSessionDocument,
  type Role,
  SetUserRoleDocument,
  UserSessionsDocument,
  type UsersQuery,
  UsersDocument,
} from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';

export type User = UsersQuery['users'][number];

/**
 * Users of the console (ADMIN): the list, creating one, changing a role, disabling,
 * enabling and deleting one, and one user's open sessions with signing them out.
 * Errors of the row actions are toasts (the API says why, e.g. the last active admin).
 * Provide it in the users page.
 */
@Injectable()
export class UsersStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(UsersDocument);
  private readonly sessionsQuery = liveQuery(UserSessionsDocument);
  private readonly creation = new FormSubmission();
  private readonly change = new FormSubmission();
  private readonly sessionsOfState = signal<string | null>(null);

  readonly users = computed(() => this.query.data()?.users ?? []);
  readonly loading = computed(() => this.query.loading() && this.query.data() === undefined);
  readonly problems = this.query.problems;
  readonly saving = this.creation.sending;
  /** A row action (role, disable, enable, delete, sign-out) is on its way. */
  readonly changing = this.change.sending;
  /** The API's messages for the create form, keyed by field (`username`, `password`, `role`). */
  readonly fieldErrors = this.creation.fieldErrors;
  /** Whose sessions are shown (a user name), or null. */
  readonly sessionsOf = this.sessionsOfState.asReadonly();
  readonly sessions = computed(() => (this.sessionsOfState() ? (this.sessionsQuery.data()?.sessions ?? []) : []));
  readonly sessionsLoading = computed(() => this.sessionsQuery.loading() && this.sessionsQuery.data() === undefined);
  readonly sessionsProblems = this.sessionsQuery.problems;

  constructor() {
    this.query.watch({});
  }

  reload(): void {
    this.query.refetch();
  }

  clearProblems(): void {
    this.creation.clear();
  }

  create(input: CreateUserInput): Promise<Outcome<User>> {
    return this.creation.send(async () => {
      const result = await firstValueFrom(
        this.apollo.mutate({
          mutation: CreateUserDocument,
          variables: { input },
          context: { errorDisplay: 'fields' },
          update: (cache, { data }) => {
            const created = data?.createUser;
            if (created) {
              cache.updateQuery({ query: UsersDocument }, (existing) =>
                existing ? { users: [...existing.users.filter((user) => user.id !== created.id), created].sort((a, b) => a.username.localeCompare(b.username)) } : existing,
              );
            }
          },
        }),
      );
      return { value: result.data?.createUser, error: result.error };
    });
  }

  /** The cache takes the returned user, so the row shows the new role. */
  setRole(username: string, role: Role): Promise<Outcome<User>> {
    return this.change.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: SetUserRoleDocument, variables: { username, role } }));
      return { value: result.data?.setUserRole, error: result.error };
    });
  }

  /** Disables a user; the API ends their sessions at once. */
  disable(username: string): Promise<Outcome<User>> {
    return this.change.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: DisableUserDocument, variables: { username } }));
      if (this.sessionsOfState() === username) {
        this.sessionsQuery.refetch();
      }
      return { value: result.data?.disableUser, error: result.error };
    });
  }

  enable(username: string): Promise<Outcome<User>> {
    return this.change.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: EnableUserDocument, variables: { username } }));
      return { value: result.data?.enableUser, error: result.error };
    });
  }

  delete(username: string): Promise<Outcome<string>> {
    return this.change.send(async () => {
      const result = await firstValueFrom(
        this.apollo.mutate({
          mutation: DeleteUserDocument,
          variables: { username },
          update: (cache, { data }) => {
            const deleted = data?.deleteUser;
            if (deleted) {
              cache.updateQuery({ query: UsersDocument }, (existing) => existing && { users: existing.users.filter((user) => user.id !== deleted.id) });
            }
          },
        }),
      );
      if (result.data?.deleteUser && this.sessionsOfState() === username) {
        this.sessionsOfState.set(null);
      }
      return { value: result.data?.deleteUser.username, error: result.error };
    });
  }

  /** Shows a user's open sessions (null: none). */
  showSessions(username: string | null): void {
    this.sessionsOfState.set(username);
    if (username) {
      this.sessionsQuery.watch({ username });
    }
  }

  revokeSession(id: string): Promise<Outcome<string>> {
    const username = this.sessionsOfState();
    return this.change.send(async () => {
      const result = await firstValueFrom(
        this.apollo.mutate({
          mutation: RevokeSessionDocument,
          variables: { id },
          update: (cache) => {
            if (username) {
              cache.updateQuery({ query: UserSessionsDocument, variables: { username } }, (existing) => existing && { sessions: existing.sessions.filter((session) => session.id !== id) });
            }
          },
        }),
      );
      return { value: result.data?.revokeSession.id, error: result.error };
    });
  }

  /** Signs out every session of a user. */
  revokeAllSessions(username: string): Promise<Outcome<string>> {
    return this.change.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: RevokeAllSessionsDocument, variables: { username } }));
      if (this.sessionsOfState() === username) {
        this.sessionsQuery.refetch();
      }
      return { value: result.data?.revokeAllSessions.username, error: result.error };
    });
  }
}
