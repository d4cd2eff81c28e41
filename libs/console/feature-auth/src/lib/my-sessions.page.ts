import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { AuthStore, ErrorReporter, MySessionsStore, Notifications, Session, type UserSessionView, userAgentSummary } from '@ccos/console/data-access';
import { ButtonDirective, ConfirmDialogComponent, DataStateComponent, PageHeaderComponent, SessionListComponent, type SessionListLabels, type SessionRow } from '@ccos/console/ui';
import { I18n, commonMessages } from '@ccos/console/util-i18n';
import { accountMessages } from './account.messages';

/** /account/sessions: where the signed-in user is signed in, and signing out this or the other sessions. */
@Component({
  selector: 'ccos-my-sessions-page',
  imports: [ButtonDirective, ConfirmDialogComponent, DataStateComponent, PageHeaderComponent, SessionListComponent],
  providers: [MySessionsStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './my-sessions.page.html',
  styleUrl: './account.pages.css',
})
export class MySessionsPage {
  private readonly auth = inject(AuthStore);
  private readonly notifications = inject(Notifications);
  private readonly errors = inject(ErrorReporter);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(accountMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(MySessionsStore);
  private readonly session = inject(Session);
  protected readonly username = computed(() => this.session.user()?.username ?? '');
  protected readonly confirmingOthers = signal(false);

  protected readonly rows = computed<readonly SessionRow[]>(() => this.store.sessions().map((session) => this.rowOf(session)));
  protected readonly labels = computed<SessionListLabels>(() => ({
    caption: this.t('list.caption'),
    client: this.t('list.client'),
    address: this.t('list.address'),
    signedIn: this.t('list.signedIn'),
    lastUsed: this.t('list.lastUsed'),
    actions: this.t('list.actions'),
    current: this.t('list.current'),
    signOut: this.t('list.signOut'),
    signOutRow: (row) => this.t('list.signOutRow', { client: row.client, address: row.address }),
  }));
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });

  protected async signOutThis(): Promise<void> {
    await this.auth.signOut();
  }

  protected async signOutSession(id: string): Promise<void> {
    const session = this.store.sessions().find((candidate) => candidate.id === id);
    const outcome = await this.store.revoke(id);
    if (outcome.ok && session) {
      const client = this.rowOf(session).client;
      this.notifications.show('success', () => this.t('sessions.signedOutOne', { client }));
    }
  }

  protected async signOutOthers(): Promise<void> {
    const outcome = await this.store.revokeOthers();
    this.confirmingOthers.set(false);
    if (outcome.ok) {
      this.notifications.show('success', () => this.t('sessions.signedOutOthers'));
    }
  }

  private rowOf(session: UserSessionView): SessionRow {
    return {
      id: session.id,
      client: userAgentSummary(session.userAgent) || this.t('list.unknownClient'),
      address: session.sourceAddress,
      signedIn: this.i18n.formatDateTime(session.createdAt),
      lastUsed: this.i18n.formatDateTime(session.lastUsedAt),
      current: session.current,
    };
  }
}
