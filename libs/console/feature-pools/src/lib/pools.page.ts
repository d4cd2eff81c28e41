import { ChangeDetectionStrategy, Component, computed, effect, inject, input } from '@angular/core';
import { ErrorReporter, type NodeGroupHostView, NodeGroupsStore } from '@ccos/console/data-access';
import { DataStateComponent, LiveIndicatorComponent, PageHeaderComponent, StatusBadgeComponent, type StatusTone } from '@ccos/console/ui';
import { I18n, ServerTextPipe, commonMessages } from '@ccos/console/util-i18n';
import { poolsMessages } from './pools.messages';

const STATE_TONES: Record<string, StatusTone> = {
  CHECKING: 'info',
  SPARE: 'ok',
  RESERVED: 'info',
  RUNNING: 'ok',
  DELETING: 'warn',
  REINSTALL_REQUIRED: 'error',
  UNUSABLE: 'error',
};
const GIB = 1024 ** 3;
type MessageKey = keyof (typeof poolsMessages)['en'];
type StateKey = Extract<MessageKey, `state.${string}`>;
type KindKey = Extract<MessageKey, `kind.${string}`>;

/** The Pools page: each node group's spares by state, its sizes, and its scale-ups and scale-downs, live. */
@Component({
  selector: 'ccos-pools-page',
  imports: [ServerTextPipe, DataStateComponent, LiveIndicatorComponent, PageHeaderComponent, StatusBadgeComponent],
  providers: [NodeGroupsStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './pools.page.html',
  styleUrl: './pools.page.css',
})
export class PoolsPage {
  private readonly errors = inject(ErrorReporter);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(poolsMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(NodeGroupsStore);

  /** From the route (`/clusters/:clusterId/pools`). */
  readonly clusterId = input.required<string>();

  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });

  constructor() {
    effect(() => this.store.select(this.clusterId()));
  }

  protected stateTone(host: NodeGroupHostView): StatusTone {
    return STATE_TONES[host.state] ?? 'neutral';
  }

  protected stateLabel(state: string): string {
    return this.t(`state.${state}` as StateKey);
  }

  protected kindLabel(kind: string): string {
    return this.t(`kind.${kind}` as KindKey);
  }

  protected gib(bytes: number): string {
    return String(Math.round((bytes / GIB) * 10) / 10);
  }
}
