import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { CreateUserDocument, type CreateUserInput, type UsersQuery, UsersDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import { type ApiProblem, type Outcome, fieldProblems, problemsOf } from '../errors/api-problem';

export type User = UsersQuery['users'][number];

/** Users of the console (ADMIN): the list and creating one. Provide it in the users page. */
@Injectable()
export class UsersStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(UsersDocument);
  private readonly creating = signal(false);
  private readonly createProblems = signal<readonly ApiProblem[]>([]);

  readonly users = computed(() => this.query.data()?.users ?? []);
  readonly loading = computed(() => this.query.loading() && this.query.data() === undefined);
  readonly problems = this.query.problems;
  readonly saving = this.creating.asReadonly();
  /** The API's messages for the create form, keyed by field (`username`, `password`, `role`). */
  readonly fieldErrors = computed(() => fieldProblems(this.createProblems()));

  constructor() {
    this.query.watch({});
  }

  reload(): void {
    this.query.refetch();
  }

  clearProblems(): void {
    this.createProblems.set([]);
  }

  async create(input: CreateUserInput): Promise<Outcome<User>> {
    this.creating.set(true);
    this.createProblems.set([]);
    try {
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
      const user = result.data?.createUser;
      if (user) {
        return { ok: true, value: user };
      }
      return this.failed(problemsOf(result.error));
    } catch (error) {
      return this.failed(problemsOf(error));
    } finally {
      this.creating.set(false);
    }
  }

  private failed(problems: readonly ApiProblem[]): Outcome<User> {
    this.createProblems.set(problems);
    return { ok: false, problems };
  }
}
