import { Injectable, computed, inject } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { CreateUserDocument, type CreateUserInput, type UsersQuery, UsersDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';

export type User = UsersQuery['users'][number];

/** Users of the console (ADMIN): the list and creating one. Provide it in the users page. */
@Injectable()
export class UsersStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(UsersDocument);
  private readonly creation = new FormSubmission();

  readonly users = computed(() => this.query.data()?.users ?? []);
  readonly loading = computed(() => this.query.loading() && this.query.data() === undefined);
  readonly problems = this.query.problems;
  readonly saving = this.creation.sending;
  /** The API's messages for the create form, keyed by field (`username`, `password`, `role`). */
  readonly fieldErrors = this.creation.fieldErrors;

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
}
