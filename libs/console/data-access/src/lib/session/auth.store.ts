import { Injectable, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { LoginDocument, LogoutDocument, MeDocument } from '@ccos/shared/api-schema';
import { type Outcome, problemsOf } from '../errors/api-problem';
import { Notifications } from '../notifications/notifications';
import { Session, type SessionUser } from './session';

/** Signing in and out: the Login mutation, the session, and a clean Apollo cache per user. */
@Injectable({ providedIn: 'root' })
export class AuthStore {
  private readonly apollo = inject(Apollo);
  private readonly session = inject(Session);
  private readonly notifications = inject(Notifications);
  private readonly signingIn = signal(false);
  readonly busy = this.signingIn.asReadonly();

  async signIn(username: string, password: string): Promise<Outcome<SessionUser>> {
    this.signingIn.set(true);
    try {
      const result = await firstValueFrom(
        this.apollo.mutate({ mutation: LoginDocument, variables: { username, password }, fetchPolicy: 'no-cache', context: { errorDisplay: 'caller' } }),
      );
      const login = result.data?.login;
      if (!login) {
        return { ok: false, problems: problemsOf(result.error ?? new Error('the API returned no session')) };
      }
      // Nothing the previous user saw may show for this one.
      await this.apollo.client.clearStore();
      this.notifications.clear();
      this.session.start({ token: login.token, expiresAt: login.expiresAt, user: login.user });
      return { ok: true, value: login.user };
    } catch (error) {
      return { ok: false, problems: problemsOf(error) };
    } finally {
      this.signingIn.set(false);
    }
  }

  /**
   * Ends the session on the server too (every device of this user), then forgets it here.
   * Forgotten here first: the server then closes this user's live connections, and that
   * must not read as an expired session.
   */
  async signOut(): Promise<void> {
    const token = this.session.token();
    this.session.signOut();
    if (token) {
      // Best effort: an unreachable API must not keep anyone signed in on this screen.
      const context = { errorDisplay: 'caller' as const, headers: { authorization: `Bearer ${token}` } };
      await firstValueFrom(this.apollo.mutate({ mutation: LogoutDocument, fetchPolicy: 'no-cache', context })).catch(() => undefined);
    }
    await this.apollo.client.clearStore();
  }

  /**
   * Checks a restored session against the API and takes the user's current role (an
   * admin may have changed it). A refused token ends the session through the error link.
   */
  async refreshUser(): Promise<void> {
    if (!this.session.signedIn()) {
      return;
    }
    try {
      const result = await firstValueFrom(this.apollo.query({ query: MeDocument, fetchPolicy: 'network-only', context: { errorDisplay: 'caller' } }));
      if (result.data?.me) {
        this.session.updateUser(result.data.me);
      }
    } catch {
      // Offline or refused: the error link already acted; the stored session stays until the API answers.
    }
  }
}
