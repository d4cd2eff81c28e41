import { Injectable, effect, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { ChangePasswordDocument, LoginDocument, LogoutDocument, MeDocument } from '@ccos/shared/api-schema';
import { type Outcome, problemsOf } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';
import { Notifications } from '../notifications/notifications';
import { Session, type SessionUser } from './session';

/** Signing in and out, changing one's password: the session, and a clean Apollo cache per user. */
@Injectable({ providedIn: 'root' })
export class AuthStore {
  private readonly apollo = inject(Apollo);
  private readonly session = inject(Session);
  private readonly notifications = inject(Notifications);
  private readonly signingIn = signal(false);
  private readonly passwordChange = new FormSubmission();
  readonly busy = this.signingIn.asReadonly();
  readonly changingPassword = this.passwordChange.sending;
  /** The API's messages for the password form, keyed by field (`currentPassword`, `newPassword`). */
  readonly passwordFieldErrors = this.passwordChange.fieldErrors;

  constructor() {
    // Another tab signed in as someone else, or out: nothing cached here may show for the next user.
    let seen = this.session.otherTabChanges();
    effect(() => {
      const changes = this.session.otherTabChanges();
      if (changes !== seen) {
        seen = changes;
        this.notifications.clear();
        void this.apollo.client.clearStore();
      }
    });
  }

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
   * Ends this session on the server too (the user's other devices stay signed in), then
   * forgets it here and so in every tab of this browser. Forgotten here first: the server
   * then closes the session's live connections, and that must not read as an expired session.
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

  /** Changes the signed-in user's password; this session stays, the user's other sessions end. Field problems show by the fields. */
  changePassword(currentPassword: string, newPassword: string): Promise<Outcome<true>> {
    return this.passwordChange.send(async () => {
      const result = await firstValueFrom(
        this.apollo.mutate({ mutation: ChangePasswordDocument, variables: { currentPassword, newPassword }, fetchPolicy: 'no-cache', context: { errorDisplay: 'fields' } }),
      );
      return { value: result.data?.changePassword ? (true as const) : null, error: result.error };
    });
  }

  clearPasswordProblems(): void {
    this.passwordChange.clear();
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
