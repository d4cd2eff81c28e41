import { Injectable, computed, inject } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { MySessionsDocument, type MySessionsQuery, RevokeAllSessionsDocument, RevokeSessionDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';

export type UserSessionView = MySessionsQuery['mySessions'][number];

/**
 * The signed-in user's open sessions (one per browser or client that signed in), and
 * signing out one of the others or all of them. Signing out this one is AuthStore.signOut.
 * Provide it in the page that uses it.
 */
@Injectable()
export class MySessionsStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(MySessionsDocument);
  private readonly revocation = new FormSubmission();

  readonly sessions = computed(() => this.query.data()?.mySessions ?? []);
  readonly current = computed(() => this.sessions().find((session) => session.current) ?? null);
  readonly others = computed(() => this.sessions().filter((session) => !session.current));
  readonly loading = computed(() => this.query.loading() && this.query.data() === undefined);
  readonly problems = this.query.problems;
  readonly revoking = this.revocation.sending;

  constructor() {
    this.query.watch({});
  }

  reload(): void {
    this.query.refetch();
  }

  /** Signs out one of the user's other sessions; errors are toasts. */
  revoke(id: string): Promise<Outcome<string>> {
    return this.revocation.send(async () => {
      const result = await firstValueFrom(
        this.apollo.mutate({ mutation: RevokeSessionDocument, variables: { id }, update: (cache) => cache.updateQuery({ query: MySessionsDocument }, (existing) => existing && { mySessions: existing.mySessions.filter((session) => session.id !== id) }) }),
      );
      return { value: result.data?.revokeSession.id, error: result.error };
    });
  }

  /** Signs out every session of the user but this one. */
  revokeOthers(): Promise<Outcome<string>> {
    return this.revocation.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: RevokeAllSessionsDocument, variables: { keepCurrent: true } }));
      this.query.refetch();
      return { value: result.data?.revokeAllSessions.username, error: result.error };
    });
  }
}
