import { ChangeDetectionStrategy, Component, computed, effect, inject, input, untracked } from '@angular/core';
import { HostManifestStore, Notifications, Session } from '@ccos/console/data-access';
import { ButtonDirective, StatusBadgeComponent, type StatusTone } from '@ccos/console/ui';
import { I18n, ServerTextPipe } from '@ccos/console/util-i18n';
import type { HostManifestState, RunningChange } from '@ccos/shared/domain';
import { nodesMessages } from '../nodes.messages';

const STATE_TONES: Readonly<Record<HostManifestState, StatusTone>> = { CURRENT: 'ok', DRIFTED: 'error', OUTDATED: 'warn', UNINSPECTED: 'neutral' };

/**
 * What the node's host runs by its last install: the files the agent wrote with their hashes,
 * the artifact set they came from, the kernel and the kubelet's version and arguments, and what
 * the last inspection found (each file changed or gone named, what runs otherwise marked); an
 * operator inspects the host now. Hidden while no install recorded it.
 */
@Component({
  selector: 'ccos-host-manifest-card',
  imports: [ButtonDirective, ServerTextPipe, StatusBadgeComponent],
  providers: [HostManifestStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    @if (store.manifest(); as manifest) {
      <section class="ccos-card" aria-labelledby="manifest-heading" data-testid="host-manifest" [attr.data-state]="manifest.state">
        <h2 id="manifest-heading">{{ t('manifest.heading') }}</h2>
        <p>
          <ccos-status-badge [tone]="tone(manifest.state)">{{ stateLabel(manifest.state) }}</ccos-status-badge>
        </p>
        <p class="ccos-muted">{{ t('manifest.recorded', { files: manifest.files.length, version: manifest.artifactSetVersion ?? '—', when: i18n.formatDateTime(manifest.recordedAt) }) }}</p>
        @if (manifest.runningAtInstall; as running) {
          <dl class="running" data-testid="manifest-running" [attr.title]="t('manifest.runningWhen')">
            @for (row of runningRows(); track row.key) {
              <dt>{{ t(row.label) }}</dt>
              <dd [attr.data-testid]="'manifest-' + row.key">
                {{ row.atInstall ?? '—' }}
                @if (row.changed) {
                  <span class="changed" [attr.data-testid]="'manifest-' + row.key + '-now'">{{ t('manifest.now', { value: row.now ?? '—' }) }}</span>
                }
              </dd>
            }
          </dl>
          @if (running.kubeletFlags.length > 0) {
            <details data-testid="manifest-flags">
              <summary>
                {{ t('manifest.flags', { count: running.kubeletFlags.length }) }}
                @if (manifest.runningChanges.includes('KUBELET_FLAGS')) {
                  <span class="changed" data-testid="manifest-flags-changed">{{ t('manifest.flagsChanged') }}</span>
                }
              </summary>
              <ul class="flags">
                @for (flag of running.kubeletFlags; track $index) {
                  <li><code>{{ flag }}</code></li>
                }
              </ul>
              @if (manifest.runningChanges.includes('KUBELET_FLAGS')) {
                <p>{{ t('manifest.flagsNow') }}</p>
                <ul class="flags" data-testid="manifest-flags-now">
                  @for (flag of manifest.runningNow?.kubeletFlags ?? []; track $index) {
                    <li><code>{{ flag }}</code></li>
                  }
                </ul>
              }
            </details>
          }
        }
        @if (!manifest.onClusterSet) {
          <p data-testid="manifest-outdated">{{ t('manifest.outdated') }}</p>
        }
        @if (manifest.inspectionProblem) {
          <p role="alert" data-testid="manifest-problem">{{ t('manifest.problem', { reason: (manifest.inspectionProblem | serverText: manifest.inspectionProblemCode : manifest.inspectionProblemParams) }) }}</p>
        }
        @if (manifest.drift.length > 0) {
          <p>{{ t('manifest.driftIntro') }}</p>
          <ul class="drift" data-testid="manifest-drift">
            @for (file of manifest.drift; track file.path) {
              <li [attr.data-path]="file.path">
                <code>{{ file.path }}</code>
                {{ file.found === null ? t('manifest.gone', { expected: file.expected.slice(0, 12) }) : t('manifest.changed', { expected: file.expected.slice(0, 12), found: file.found.slice(0, 12) }) }}
              </li>
            }
          </ul>
        }
        <p class="ccos-muted">{{ manifest.inspectedAt ? t('manifest.inspected', { when: i18n.formatDateTime(manifest.inspectedAt) }) : t('manifest.notInspected') }}</p>
        @if (isOperator()) {
          <button ccosButton="secondary" type="button" data-testid="inspect-host" [busy]="store.busy()" [disabled]="store.busy()" (click)="inspect()">{{ t('manifest.inspect') }}</button>
        }
      </section>
    }
  `,
  styles: `
    .drift, .flags { padding-left: 1.2rem; overflow-wrap: anywhere; }
    .running { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0.5rem 0; }
    .running dd { margin: 0; }
    .changed { margin-left: 0.5rem; color: var(--ccos-warn); font-weight: 600; }
  `,
})
export class HostManifestCardComponent {
  readonly nodeId = input.required<string>();
  /** The node's status: a finished install records anew, so the card reads again when it changes. */
  readonly status = input.required<string>();

  protected readonly store = inject(HostManifestStore);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(nodesMessages);
  private readonly session = inject(Session);
  private readonly notifications = inject(Notifications);
  protected readonly isOperator = computed(() => this.session.allows('OPERATOR'));
  /** The kernel and the kubelet's version as the install found them, and what runs now where that differs. */
  protected readonly runningRows = computed(() => {
    const manifest = this.store.manifest();
    const row = (key: string, label: 'manifest.kernel' | 'manifest.kubelet', field: 'kernelRelease' | 'kubeletVersion', change: RunningChange) => ({
      key, label, atInstall: manifest?.runningAtInstall?.[field] ?? null, now: manifest?.runningNow?.[field] ?? null, changed: manifest?.runningChanges.includes(change) ?? false,
    });
    return [row('kernel', 'manifest.kernel', 'kernelRelease', 'KERNEL'), row('kubelet', 'manifest.kubelet', 'kubeletVersion', 'KUBELET_VERSION')];
  });

  constructor() {
    effect(() => this.store.select(this.nodeId()));
    let seen: string | null = null;
    effect(() => {
      const status = this.status();
      if (seen !== null && status !== seen) {
        untracked(() => this.store.reload());
      }
      seen = status;
    });
  }

  protected stateLabel(state: HostManifestState): string {
    return this.t(`manifest.state.${state}`);
  }

  protected tone(state: HostManifestState): StatusTone {
    return STATE_TONES[state];
  }

  protected async inspect(): Promise<void> {
    const outcome = await this.store.inspect();
    if (outcome.ok) {
      this.notifications.show(outcome.value.state === 'CURRENT' ? 'success' : 'info', () => this.t(`manifest.done.${outcome.value.state}`, { files: outcome.value.drift.length }));
    }
  }
}
