import { ChangeDetectionStrategy, Component, computed, effect, inject, input, signal } from '@angular/core';
import { RouterLink } from '@angular/router';
import { ClusterRolloutsStore, type RolloutAction, type RolloutPreviewView, type RolloutView, Notifications, Session } from '@ccos/console/data-access';
import { ButtonDirective, StatusBadgeComponent, type StatusTone, TextFieldComponent } from '@ccos/console/ui';
import { I18n, ServerTextPipe } from '@ccos/console/util-i18n';
import type { RolloutKind, StartRolloutInput } from '@ccos/shared/api-schema';
import { ROLLOUT_KINDS } from '@ccos/shared/domain';
import { clustersMessages } from '../clusters.messages';

const STATUS_TONES: Readonly<Record<RolloutView['status'], StatusTone>> = { RUNNING: 'info', PAUSED: 'warn', SUCCEEDED: 'ok', CANCELLED: 'neutral' };
const PHASE_TONES: Readonly<Record<RolloutView['nodes'][number]['phase'], StatusTone>> = {
  PENDING: 'neutral', DRAIN: 'info', APPLY: 'info', REBOOT: 'info', WAIT_READY: 'info', UNCORDON: 'info', DONE: 'ok', SKIPPED: 'neutral',
};

/**
 * The cluster's latest rollout on its page, live: its status, what it waits for or why it paused,
 * each node's phase (with the agent's run of an upgrade or a restore); pause, resume and cancel,
 * and (when none is in progress) a form to start one (reboot, upgrade or restore), for an OPERATOR.
 * The API checks the numbers and the window; its refusals show on their fields.
 */
@Component({
  selector: 'ccos-rollout-card',
  imports: [ButtonDirective, RouterLink, ServerTextPipe, StatusBadgeComponent, TextFieldComponent],
  providers: [ClusterRolloutsStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <section class="ccos-card" aria-labelledby="rollout-heading" data-testid="rollout">
      <div class="head">
        <h2 id="rollout-heading">{{ t('rollout.heading') }}</h2>
        @if (store.latest(); as rollout) {
          <ccos-status-badge [tone]="statusTone(rollout)" data-testid="rollout-status">{{ statusLabel(rollout) }}</ccos-status-badge>
        }
        @if (store.live()) {
          <span class="ccos-muted">{{ t('rollout.live') }}</span>
        }
      </div>
      @if (store.latest(); as rollout) {
        <p class="ccos-muted">
          {{ t('rollout.summary', { kind: kindLabel(rollout), budget: budget(rollout), when: i18n.formatDateTime(rollout.createdAt) }) }}
          <span class="ccos-mono">{{ rollout.createdBy }}</span>
        </p>
        @if (rollout.maintenanceWindow; as window) {
          <p class="ccos-muted">{{ t('rollout.window', { minutes: window.durationMinutes }) }} <code>{{ window.cron }}</code> <code>{{ window.timeZone }}</code></p>
        }
        @if (rollout.reason) {
          <p [class.reason]="rollout.status === 'PAUSED'" [class.ccos-muted]="rollout.status !== 'PAUSED'" role="status" data-testid="rollout-reason">{{ rollout.reason | serverText: rollout.reasonCode : rollout.reasonParams }}</p>
        }
        @if (rollout.waitingFor) {
          <p class="ccos-muted" data-testid="rollout-waiting">{{ rollout.waitingFor | serverText: rollout.waitingForCode : rollout.waitingForParams }}</p>
        }
        <ul class="nodes" [attr.aria-label]="t('rollout.nodes')">
          @for (node of rollout.nodes; track node.nodeId) {
            <li [attr.data-node]="node.nodeName" [attr.data-phase]="node.phase">
              <span class="name ccos-mono">{{ node.nodeName }}</span>
              <ccos-status-badge [tone]="phaseTone(node.phase)">{{ phaseLabel(node.phase) }}</ccos-status-badge>
              @if (node.applyRunId) {
                <a [routerLink]="['/clusters', clusterId(), 'nodes', node.nodeId]" data-testid="rollout-agent-run">{{ t('rollout.agentRun') }}</a>
              }
              @if (node.problem) {
                <span class="problem">{{ node.problem | serverText: node.problemCode : node.problemParams }}</span>
              }
            </li>
          }
        </ul>
        @if (canOperate() && inProgress(rollout)) {
          <div class="ccos-actions">
            @if (rollout.status === 'RUNNING') {
              <button ccosButton="secondary" type="button" [busy]="store.busy() === 'pause'" (click)="act('pause', rollout.id)">{{ t('rollout.pause') }}</button>
            } @else {
              <button ccosButton="primary" type="button" [busy]="store.busy() === 'resume'" (click)="act('resume', rollout.id)">{{ t('rollout.resume') }}</button>
            }
            <button ccosButton="danger" type="button" [busy]="store.busy() === 'cancel'" (click)="act('cancel', rollout.id)">{{ t('rollout.cancel') }}</button>
          </div>
        }
      } @else {
        <p class="ccos-muted">{{ t('rollout.none') }}</p>
      }
      @if (canOperate() && !inProgress(store.latest())) {
        <form class="start" (submit)="start($event)" [attr.aria-label]="t('rollout.form')">
          <fieldset class="kinds">
            <legend>{{ t('rollout.kindField') }}</legend>
            @for (choice of kinds; track choice) {
              <label class="check"><input type="radio" name="kind" [value]="choice" [checked]="kind() === choice" (change)="choose(choice)" /> {{ kindName(choice) }}</label>
            }
            @if (store.fieldErrors()['kind']; as problem) {
              <span class="problem" role="alert">{{ problem }}</span>
            }
          </fieldset>
          <ccos-text-field name="maxUnavailable" inputMode="numeric" [label]="t('rollout.maxUnavailable')" [error]="errorOf('maxUnavailable')" [(value)]="maxUnavailable" />
          <label class="check"><input type="checkbox" name="maxUnavailableIsPercent" [checked]="percent()" (change)="percent.set(checkedOf($event))" /> {{ t('rollout.percent') }}</label>
          <ccos-text-field name="cron" [label]="t('rollout.cron')" [error]="store.fieldErrors()['window.cron'] ?? null" [(value)]="cron" />
          @if (cron().trim() !== '') {
            <ccos-text-field name="durationMinutes" inputMode="numeric" [label]="t('rollout.minutes')" [error]="errorOf('window.durationMinutes')" [(value)]="minutes" />
            <ccos-text-field name="timeZone" [label]="t('rollout.timeZone')" [error]="store.fieldErrors()['window.timeZone'] ?? null" [(value)]="timeZone" />
          }
          @if (preview(); as shown) {
            <section class="preview" data-testid="rollout-preview" [attr.aria-label]="t('rollout.preview.heading')">
              <p>{{ t('rollout.preview.summary', { nodes: shown.nodes.length, allowed: shown.allowed }) }}</p>
              @if (shown.windowOpen === false && shown.windowChangesAt) {
                <p class="ccos-muted">{{ t('rollout.preview.windowClosed', { at: i18n.formatDateTime(shown.windowChangesAt) }) }}</p>
              }
              <ul class="nodes">
                @for (node of shown.nodes; track node.nodeId) {
                  <li [attr.data-node]="node.nodeName">
                    <span class="name ccos-mono">{{ node.nodeName }}</span>
                    <span>{{ t('rollout.preview.drain', { evict: node.counts.evict, skip: node.counts.skip }) }}</span>
                    @for (line of node.refusalLines; track $index) {
                      <span class="problem">{{ line.message | serverText: line.messageCode : line.messageParams }}</span>
                    }
                    @for (budget of node.budgets; track budget.name) {
                      @if (budget.blocks) {
                        <span class="problem" data-testid="rollout-preview-blocks">{{ t('rollout.preview.blocks') }} <code>{{ budget.namespace }}/{{ budget.name }}</code></span>
                      }
                    }
                  </li>
                }
              </ul>
            </section>
          }
          <div class="ccos-actions">
            <button ccosButton="secondary" type="button" [busy]="store.sending() && previewing()" (click)="showPreview()">{{ t('rollout.preview.button') }}</button>
            <button ccosButton="primary" type="submit" [busy]="store.sending() && !previewing()">{{ startLabel() }}</button>
          </div>
        </form>
      }
    </section>
  `,
  styles: `
    .head { display: flex; align-items: center; gap: 0.75rem; flex-wrap: wrap; }
    .reason { margin: 0.5rem 0; padding: 0.5rem 0.75rem; border-left: 3px solid var(--ccos-warn, #b45309); background: var(--ccos-surface-muted, #fffbeb); }
    .nodes { list-style: none; padding: 0; margin: 0.5rem 0; display: grid; gap: 0.35rem; }
    .nodes li { display: flex; align-items: center; gap: 0.5rem; flex-wrap: wrap; }
    .nodes .name { font-family: var(--ccos-mono, monospace); min-width: 8rem; }
    .nodes .problem { color: var(--ccos-text-muted); font-size: 0.9em; }
    .start { display: grid; gap: 0.75rem; margin-top: 0.75rem; }
    .preview { border-top: 1px solid var(--ccos-border, #e5e7eb); padding-top: 0.5rem; }
    .check { display: flex; align-items: center; gap: 0.5rem; }
    .kinds { border: 0; padding: 0; margin: 0; display: flex; gap: 1rem; flex-wrap: wrap; }
    .kinds legend { padding: 0; margin-bottom: 0.35rem; }
    .kinds .problem { color: var(--ccos-danger, #b91c1c); flex-basis: 100%; }
  `,
})
export class RolloutCardComponent {
  readonly clusterId = input.required<string>();

  private readonly session = inject(Session);
  private readonly notifications = inject(Notifications);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(clustersMessages);
  protected readonly store = inject(ClusterRolloutsStore);
  protected readonly canOperate = computed(() => this.session.allows('OPERATOR'));

  protected readonly kinds = ROLLOUT_KINDS;
  protected readonly kind = signal<RolloutKind>('REBOOT');
  protected readonly maxUnavailable = signal('1');
  protected readonly percent = signal(false);
  protected readonly cron = signal('');
  protected readonly minutes = signal('120');
  protected readonly timeZone = signal(Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
  /** Fields that are not whole numbers, found before sending. */
  private readonly notWhole = signal<ReadonlySet<string>>(new Set());
  protected readonly preview = signal<RolloutPreviewView | null>(null);
  protected readonly previewing = signal(false);

  constructor() {
    effect(() => this.store.select(this.clusterId()));
  }

  protected statusTone(rollout: RolloutView): StatusTone {
    return STATUS_TONES[rollout.status];
  }

  protected kindLabel(rollout: RolloutView): string {
    return this.kindName(rollout.kind);
  }

  protected kindName(kind: RolloutKind): string {
    return this.t(`rollout.kind.${kind}`);
  }

  protected startLabel(): string {
    return this.t(`rollout.start.${this.kind()}`);
  }

  protected statusLabel(rollout: RolloutView): string {
    return this.t(`rollout.status.${rollout.status}`);
  }

  protected phaseLabel(phase: RolloutView['nodes'][number]['phase']): string {
    return this.t(`rollout.phase.${phase}`);
  }

  protected phaseTone(phase: RolloutView['nodes'][number]['phase']): StatusTone {
    return PHASE_TONES[phase];
  }

  protected budget(rollout: RolloutView): string {
    return `${rollout.maxUnavailable}${rollout.maxUnavailableIsPercent ? '%' : ''}`;
  }

  protected inProgress(rollout: RolloutView | null): boolean {
    return rollout?.status === 'RUNNING' || rollout?.status === 'PAUSED';
  }

  protected errorOf(field: string): string | null {
    return this.notWhole().has(field) ? this.t('rollout.wholeNumber') : (this.store.fieldErrors()[field] ?? null);
  }

  /** Another kind selects other nodes: a preview shown for the last one is dropped. */
  protected choose(kind: RolloutKind): void {
    this.kind.set(kind);
    this.preview.set(null);
  }

  protected checkedOf(event: Event): boolean {
    return (event.target as HTMLInputElement).checked;
  }

  protected async act(action: RolloutAction, id: string): Promise<void> {
    await this.store.act(action, id);
  }

  protected async start(event: Event): Promise<void> {
    event.preventDefault();
    const input = this.input();
    if (!input) {
      return;
    }
    const outcome = await this.store.start(input);
    if (outcome.ok) {
      this.preview.set(null);
      this.notifications.show('success', () => this.t('rollout.started'));
    }
  }

  /** What starting would do now, shown above the buttons; starts nothing. */
  protected async showPreview(): Promise<void> {
    const input = this.input();
    if (!input) {
      return;
    }
    this.previewing.set(true);
    try {
      const outcome = await this.store.preview(input);
      this.preview.set(outcome.ok ? outcome.value : null);
    } finally {
      this.previewing.set(false);
    }
  }

  /** The form as the API's input, or null (and the fields marked) when a number is not whole. */
  private input(): StartRolloutInput | null {
    const whole = (text: string) => (/^\d{1,5}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN);
    const cron = this.cron().trim();
    const bad = new Set<string>();
    if (Number.isNaN(whole(this.maxUnavailable()))) {
      bad.add('maxUnavailable');
    }
    if (cron !== '' && Number.isNaN(whole(this.minutes()))) {
      bad.add('window.durationMinutes');
    }
    this.notWhole.set(bad);
    if (bad.size > 0) {
      return null;
    }
    return {
      clusterId: this.clusterId(),
      kind: this.kind(),
      maxUnavailable: whole(this.maxUnavailable()),
      maxUnavailableIsPercent: this.percent(),
      ...(cron === '' ? {} : { window: { cron, durationMinutes: whole(this.minutes()), timeZone: this.timeZone().trim() } }),
    };
  }
}
