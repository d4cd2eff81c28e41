import { DOCUMENT } from '@angular/common';
import { ChangeDetectionStrategy, Component, Injector, afterNextRender, computed, effect, inject, signal } from '@angular/core';
import { takeUntilDestroyed, toSignal } from '@angular/core/rxjs-interop';
import { NavigationEnd, Router, RouterLink, RouterLinkActive, RouterOutlet } from '@angular/router';
import { filter, map } from 'rxjs';
import { AgentChannelStore, AuthStore, ClusterListStore, Notifications, SIGN_IN_PATH, Session } from '@ccos/console/data-access';
import { ClusterSwitcherComponent, LanguageSwitchComponent, UserMenuComponent } from '@ccos/console/ui';
import { I18n, LANGUAGES, LANGUAGE_NAMES, type Language, commonMessages, isLanguage } from '@ccos/console/util-i18n';
import type { Role } from '@ccos/shared/domain';
import { shellMessages } from './shell.messages';

/**
 * The frame around every signed-in page: header (product, cluster switcher, language,
 * user menu), side navigation by role, and the page. When the session ends (sign-out,
 * expiry, token refused) it sends the user to sign-in.
 */
@Component({
  selector: 'ccos-shell',
  imports: [RouterOutlet, RouterLink, RouterLinkActive, ClusterSwitcherComponent, LanguageSwitchComponent, UserMenuComponent],
  providers: [ClusterListStore, AgentChannelStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './shell.component.html',
  styleUrl: './shell.component.css',
})
export class ShellComponent {
  private readonly session = inject(Session);
  private readonly auth = inject(AuthStore);
  private readonly router = inject(Router);
  private readonly notifications = inject(Notifications);
  private readonly injector = inject(Injector);
  private readonly document = inject(DOCUMENT);
  private readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(shellMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly clusters = inject(ClusterListStore);
  protected readonly agentChannel = inject(AgentChannelStore);

  protected readonly user = this.session.user;
  protected readonly isAdmin = computed(() => this.session.allows('ADMIN'));
  protected readonly language = this.i18n.language;
  protected readonly languages = LANGUAGES.map((code) => ({ code, name: LANGUAGE_NAMES[code], tag: code === 'zh' ? 'zh-CN' : 'en' }));
  private readonly url = toSignal(
    this.router.events.pipe(
      filter((event) => event instanceof NavigationEnd),
      map((event) => event.urlAfterRedirects),
    ),
    { initialValue: this.router.url },
  );
  /** The cluster whose page is open, for the switcher. */
  protected readonly currentClusterId = computed(() => {
    const id = /^\/clusters\/([^/?#]+)/.exec(this.url())?.[1];
    return id && id !== 'new' ? decodeURIComponent(id) : null;
  });
  /** The cluster of the last cluster page visited, so its pages stay one click away from elsewhere. */
  private readonly lastClusterId = signal<string | null>(null);
  /** The cluster whose nodes and certificates the navigation links to: the open one, the last one, or the only one. */
  protected readonly navCluster = computed(() => {
    const clusters = this.clusters.clusters();
    const id = this.currentClusterId() ?? this.lastClusterId() ?? (clusters.length === 1 ? clusters[0].id : null);
    return id ? (clusters.find((cluster) => cluster.id === id) ?? null) : null;
  });

  constructor() {
    effect(() => {
      const id = this.currentClusterId();
      if (id) {
        this.lastClusterId.set(id);
      }
    });
    effect(() => {
      if (!this.session.signedIn()) {
        const expired = this.session.signedOutReason() === 'expired';
        void this.router.navigate([SIGN_IN_PATH], { queryParams: expired ? { returnUrl: this.router.url } : {} });
      }
    });
    void this.auth.refreshUser();
    this.moveFocusToHeadingAfterNavigation();
  }

  protected async signOut(): Promise<void> {
    await this.auth.signOut();
    this.notifications.show('info', () => this.t('signedOut'));
  }

  protected switchLanguage(code: string): void {
    if (isLanguage(code)) {
      this.i18n.setLanguage(code satisfies Language);
    }
  }

  protected roleLabel(role: Role): string {
    return this.common(`role.${role}`);
  }

  /** Switching clusters keeps the kind of page (nodes, certificates) when there is one. */
  protected openCluster(id: string | null): void {
    const page = /^\/clusters\/[^/?#]+\/(nodes|csrs)\b/.exec(this.url())?.[1];
    void this.router.navigate(id ? ['/clusters', id, ...(page ? [page] : [])] : ['/clusters']);
  }

  protected focusMain(event: Event): void {
    event.preventDefault();
    this.focusHeading();
  }

  /** After an in-app navigation, screen reader and keyboard users start at the new page's heading. */
  private moveFocusToHeadingAfterNavigation(): void {
    let first = true;
    this.router.events.pipe(filter((event) => event instanceof NavigationEnd), takeUntilDestroyed()).subscribe(() => {
      if (first) {
        first = false;
        return;
      }
      afterNextRender(() => this.focusHeading(), { injector: this.injector });
    });
  }

  private focusHeading(): void {
    const heading = this.document.querySelector<HTMLElement>('main [data-page-heading]') ?? this.document.querySelector<HTMLElement>('main');
    heading?.focus();
  }
}
