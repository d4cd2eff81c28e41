import { NgTemplateOutlet } from '@angular/common';
import { ChangeDetectionStrategy, Component, booleanAttribute, computed, inject, input, output } from '@angular/core';
import { RouterLink } from '@angular/router';
import type { Csr } from '@ccos/console/data-access';
import { ButtonDirective, type CheckItem, CheckListComponent, StatusBadgeComponent, type StatusTone } from '@ccos/console/ui';
import { I18n, ServerTextPipe } from '@ccos/console/util-i18n';
import type { CsrStatus } from '@ccos/shared/api-schema';
import { isKnownCheck } from '../csr-checks';
import { csrsMessages } from '../csrs.messages';

const STATUS_TONES: Readonly<Record<CsrStatus, StatusTone>> = { PENDING: 'warn', APPROVED: 'ok', DENIED: 'error', FAILED: 'error' };

/**
 * One CSR: what it claims (signer, requester, node, subject, SANs, key), how old it is,
 * its status, the policy's verdict with every check, the decisions recorded — and, for a
 * pending one and an operator, Approve and Deny.
 */
@Component({
  selector: 'ccos-csr-card',
  imports: [ServerTextPipe, NgTemplateOutlet, RouterLink, ButtonDirective, CheckListComponent, StatusBadgeComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  host: { '[class.highlighted]': 'highlighted()', '[attr.data-csr]': 'csr().name', '[attr.data-kind]': "csr().verdict.kind ?? 'OTHER'" },
  templateUrl: './csr-card.component.html',
  styleUrl: './csr-card.component.css',
})
export class CsrCardComponent {
  readonly csr = input.required<Csr>();
  readonly clusterId = input.required<string>();
  /** Now, so ages move without asking the server. */
  readonly now = input.required<number>();
  readonly canDecide = input(false, { transform: booleanAttribute });
  readonly deciding = input(false, { transform: booleanAttribute });
  readonly highlighted = input(false, { transform: booleanAttribute });
  readonly approveRequested = output<Csr>();
  readonly denyRequested = output<Csr>();

  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(csrsMessages);

  protected readonly headingId = computed(() => `csr-${this.csr().name.replace(/[^\w-]/g, '_')}`);
  protected readonly kindLabel = computed(() => {
    const kind = this.csr().verdict.kind;
    return kind ? this.t(`kind.${kind}`) : this.t('kind.OTHER');
  });
  protected readonly statusTone = computed(() => STATUS_TONES[this.csr().status]);
  protected readonly statusLabel = computed(() => this.t(`status.${this.csr().status}`));
  protected readonly pending = computed(() => this.csr().status === 'PENDING');
  /** The decision this service recorded last, whose checks explain a decided CSR. */
  protected readonly lastDecision = computed(() => this.csr().decisions.at(-1) ?? null);
  /**
   * A pending CSR shows what the policy says now; a decided one what it said when decided
   * (now it would only say "not pending"). A CSR decided outside this service has none.
   */
  protected readonly shownChecks = computed(() => (this.pending() ? this.csr().verdict.checks : (this.lastDecision()?.checks ?? [])));
  protected readonly checks = computed<readonly CheckItem[]>(() => this.shownChecks().map((check) => ({ label: this.checkLabel(check.name), passed: check.passed, detail: this.i18n.server(check.detailCode, check.detailParams, check.detail) })));
  protected readonly passedCount = computed(() => this.shownChecks().filter((check) => check.passed).length);
  protected readonly verdictTone = computed<StatusTone>(() => (this.csr().verdict.decision === 'APPROVE' ? 'ok' : this.csr().verdict.decision === 'DENY_SUPERSEDED' ? 'neutral' : 'error'));
  protected readonly sans = computed(() => {
    const sans = this.csr().sans;
    return sans ? [...sans.dnsNames, ...sans.ipAddresses, ...sans.emailAddresses, ...sans.uris, ...sans.otherNames] : [];
  });
  protected readonly age = computed(() => {
    const created = this.csr().createdAt;
    const seconds = created ? (this.now() - Date.parse(created)) / 1000 : (this.csr().ageSeconds ?? 0);
    return this.t('age', { age: this.i18n.formatDuration(Math.max(0, seconds) * 1000) });
  });
  protected readonly keyText = computed(() => {
    const key = this.csr().key;
    if (!key) {
      return '—';
    }
    const size = key.bits ? ` ${key.bits}` : key.curve ? ` ${key.curve}` : '';
    return `${key.algorithm}${size} · ${key.signatureAlgorithm}`;
  });

  protected checkLabel(name: string): string {
    return isKnownCheck(name) ? this.t(`check.${name}`) : name;
  }

  protected decisionLabel(decision: 'APPROVED' | 'DENIED' | 'LEFT_PENDING'): string {
    return this.t(`decision.${decision}`);
  }

  protected verdictLabel(): string {
    return this.t(`verdict.${this.csr().verdict.decision}`);
  }
}
