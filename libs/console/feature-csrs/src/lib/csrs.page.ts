import { DOCUMENT } from '@angular/common';
import { ChangeDetectionStrategy, Component, afterRenderEffect, computed, effect, inject, input, signal } from '@angular/core';
import { RouterLink } from '@angular/router';
import { ClusterDetailStore, type Csr, CsrReviewStore, ErrorReporter, Notifications, Session } from '@ccos/console/data-access';
import {
  ButtonDirective,
  type CheckItem,
  CheckListComponent,
  ConfirmDialogComponent,
  DataStateComponent,
  LiveIndicatorComponent,
  PageHeaderComponent,
  StatusBadgeComponent,
  type StatusTone,
  TextFieldComponent,
} from '@ccos/console/ui';
import { I18n, commonMessages, ServerTextPipe } from '@ccos/console/util-i18n';
import type { CsrPolicyDecision } from '@ccos/shared/api-schema';
import { FORCE_REASON_MAX_LENGTH } from '@ccos/shared/domain';
import { CsrCardComponent } from './csr-card/csr-card.component';
import { isKnownCheck } from './csr-checks';
import { csrsMessages } from './csrs.messages';

/** How often ages move on screen; the CSRs themselves are pushed. */
const CLOCK_MS = 10_000;

/**
 * 证书处理 for one cluster: pending CSRs with the policy's verdict and every check, recent
 * decisions (impostors' denied requests marked), and what auto-approve would do now — all
 * live through `csrChanged`. OPERATOR approves what the policy allows or denies with a reason;
 * only an ADMIN forces an approval past the policy, with a written reason, and never past the
 * checks the policy keeps absolute. `?csr=<name>` (from a node's install step) scrolls to that
 * request and marks it.
 */
@Component({
  selector: 'ccos-csrs-page',
  imports: [ServerTextPipe, 
    RouterLink,
    ButtonDirective,
    CheckListComponent,
    ConfirmDialogComponent,
    CsrCardComponent,
    DataStateComponent,
    LiveIndicatorComponent,
    PageHeaderComponent,
    StatusBadgeComponent,
    TextFieldComponent,
  ],
  providers: [CsrReviewStore, ClusterDetailStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './csrs.page.html',
  styleUrl: './csrs.page.css',
})
export class CsrsPage {
  /** From the route (`/clusters/:clusterId/csrs`). */
  readonly clusterId = input.required<string>();
  /** `?csr=` — the request to show first. */
  readonly csr = input<string | undefined>();

  private readonly session = inject(Session);
  private readonly errors = inject(ErrorReporter);
  private readonly notifications = inject(Notifications);
  private readonly document = inject(DOCUMENT);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(csrsMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(CsrReviewStore);
  protected readonly cluster = inject(ClusterDetailStore);

  protected readonly FORCE_REASON_MAX_LENGTH = FORCE_REASON_MAX_LENGTH;
  protected readonly now = signal(Date.now());
  protected readonly approving = signal<Csr | null>(null);
  protected readonly forceConfirmed = signal(false);
  protected readonly forceReason = signal('');
  private readonly forceTried = signal(false);
  protected readonly denying = signal<Csr | null>(null);
  protected readonly denyReason = signal('');
  private readonly denyTried = signal(false);
  private scrolledTo: string | null = null;

  protected readonly canDecide = computed(() => this.session.allows('OPERATOR'));
  protected readonly canForce = computed(() => this.session.allows('ADMIN'));
  protected readonly heading = computed(() => {
    const name = this.cluster.cluster()?.name;
    return name ? this.t('headingOf', { cluster: name }) : this.t('heading');
  });
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });
  /** Approving against the policy: the failed checks force may go past, and those it never does. */
  protected readonly failedChecks = computed<readonly CheckItem[]>(() => this.failed(true));
  protected readonly blockingChecks = computed<readonly CheckItem[]>(() => this.failed(false));
  protected readonly mustForce = computed(() => {
    const csr = this.approving();
    return csr !== null && csr.verdict.decision !== 'APPROVE';
  });
  /** Why this forced approval cannot be confirmed: not an ADMIN, or a check force never overrides. */
  protected readonly forceImpossible = computed(() => this.mustForce() && (!this.canForce() || this.blockingChecks().length > 0));
  protected readonly forceReasonError = computed(() => {
    const reason = this.forceReason().trim();
    if (reason.length > FORCE_REASON_MAX_LENGTH) {
      return this.t('force.reasonTooLong', { max: FORCE_REASON_MAX_LENGTH, length: reason.length });
    }
    return this.forceTried() && reason.length === 0 ? this.t('force.reasonRequired') : null;
  });
  protected readonly denyError = computed(() => {
    const server = this.store.denyFieldErrors()['reason'];
    if (server) {
      return server;
    }
    return this.denyTried() && !this.denyReason().trim() ? this.t('deny.reasonRequired') : null;
  });

  constructor() {
    effect(() => {
      this.store.select(this.clusterId());
      this.cluster.select(this.clusterId());
    });
    effect((onCleanup) => {
      const timer = setInterval(() => this.now.set(Date.now()), CLOCK_MS);
      onCleanup(() => clearInterval(timer));
    });
    // Once the linked request is on screen, bring it into view (once per name).
    afterRenderEffect(() => {
      const name = this.csr();
      if (!name || name === this.scrolledTo || !this.store.csrs().some((csr) => csr.name === name)) {
        return;
      }
      const card = this.document.querySelector<HTMLElement>(`ccos-csr-card[data-csr="${CSS.escape(name)}"]`);
      if (card) {
        this.scrolledTo = name;
        card.scrollIntoView({ block: 'start' });
      }
    });
  }

  private failed(overridable: boolean): CheckItem[] {
    return (this.approving()?.verdict.checks ?? [])
      .filter((check) => !check.passed && check.overridable === overridable)
      .map((check) => ({ label: this.checkLabel(check.name), passed: false, detail: this.i18n.server(check.detailCode, check.detailParams, check.detail) }));
  }

  protected checkLabel(name: string): string {
    return isKnownCheck(name) ? this.t(`check.${name}`) : name;
  }

  protected decisionTone(decision: CsrPolicyDecision): StatusTone {
    return decision === 'APPROVE' ? 'ok' : decision === 'DENY_SUPERSEDED' ? 'neutral' : 'error';
  }

  protected decisionLabel(decision: CsrPolicyDecision): string {
    return this.t(`verdict.${decision}`);
  }

  protected approveBody(csr: Csr): string {
    const node = csr.node?.hostname ?? csr.verdict.node;
    const kind = csr.verdict.kind ? this.t(`kind.${csr.verdict.kind}`) : this.t('kind.OTHER');
    return node ? this.t('approve.body', { node, kind }) : this.t('approve.bodyNoNode', { requester: csr.requester.username });
  }

  protected askApprove(csr: Csr): void {
    this.forceConfirmed.set(false);
    this.forceReason.set('');
    this.forceTried.set(false);
    this.approving.set(csr);
  }

  protected confirmForce(event: Event): void {
    this.forceConfirmed.set((event.target as HTMLInputElement).checked);
  }

  protected async approve(): Promise<void> {
    const csr = this.approving();
    if (!csr) {
      return;
    }
    const force = this.mustForce();
    if (force) {
      this.forceTried.set(true);
      if (this.forceImpossible() || !this.forceConfirmed() || this.forceReason().trim().length === 0 || this.forceReasonError() !== null) {
        return;
      }
    }
    const name = csr.name;
    const outcome = await this.store.approve(name, force, force ? this.forceReason().trim() : null);
    this.approving.set(null);
    if (outcome.ok) {
      this.notifications.show('success', () => this.t('done.approved', { name }));
    }
  }

  protected askDeny(csr: Csr): void {
    this.store.clearDenyProblems();
    this.denyReason.set('');
    this.denyTried.set(false);
    this.denying.set(csr);
  }

  protected async deny(): Promise<void> {
    const csr = this.denying();
    this.denyTried.set(true);
    if (!csr || !this.denyReason().trim()) {
      return;
    }
    const name = csr.name;
    const outcome = await this.store.deny(name, this.denyReason().trim());
    if (outcome.ok) {
      this.denying.set(null);
      this.notifications.show('success', () => this.t('done.denied', { name }));
    }
  }
}
