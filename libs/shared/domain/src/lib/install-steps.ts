import { type CodedText, type Message, message } from '@ccos/shared/messages';

/**
 * The six install steps the agent runs on a new host, in order
 * (seed design, "安装节点"). The catalogue is data: the agent, the API and the
 * console all read their order, names and hints from here.
 */
export const INSTALL_STEPS = [
  'PREFLIGHT',
  'DOWNLOAD_BINARIES',
  'INSTALL_PACKAGES',
  'INSTALL_SERVICES',
  'APPLY_IGNITION',
  'START_KUBELET',
] as const;
export type InstallStep = (typeof INSTALL_STEPS)[number];

/** What the agent says about a step. */
export const STEP_EVENT_STATUSES = ['STARTED', 'PROGRESS', 'SUCCEEDED', 'FAILED'] as const;
export type StepEventStatus = (typeof STEP_EVENT_STATUSES)[number];

/** The state of one step within a run, folded from its events. */
export type StepState = 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';

/**
 * Why a run's agent runs. INSTALL: a host becomes a node (the node's status follows the run).
 * APPLY: a rollout re-runs some steps on a joined node (UPGRADE, REAPPLY); the node stays JOINED
 * whatever the run does, and the rollout reads how it ended.
 */
export const INSTALL_RUN_PURPOSES = ['INSTALL', 'APPLY'] as const;
export type InstallRunPurpose = (typeof INSTALL_RUN_PURPOSES)[number];

export const INSTALL_RUN_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type InstallRunStatus = (typeof INSTALL_RUN_STATUSES)[number];

export interface StepDescription {
  readonly step: InstallStep;
  /** The step's name, from the message catalogue (`step.<STEP>.title`). */
  readonly title: CodedText;
  readonly summary: string;
  /** Shown when the step fails and the agent gave no more specific hint (`step.<STEP>.hint`). */
  readonly hint: CodedText;
}

const STEP_SUMMARIES: ReadonlyArray<Pick<StepDescription, 'step' | 'summary'>> = [
  {
    step: 'PREFLIGHT',
    summary: 'Kernel, memory, CPUs, swap off, time synchronised, VIP:6443, VIP:22623 and the installer service reachable, hostname resolvable and unique.',
  },
  {
    step: 'DOWNLOAD_BINARIES',
    summary: 'oc, hyperkube, kubelet, kube-apiserver, kube-controller-manager, kube-scheduler, ignition and coreos-installer from the installer service, sha256 verified.',
  },
  {
    step: 'INSTALL_PACKAGES',
    summary: 'The rpm set from the installer service, installed with the host package tool.',
  },
  {
    step: 'INSTALL_SERVICES',
    summary: 'The systemd units from the installer service, then daemon-reload and enable.',
  },
  {
    step: 'APPLY_IGNITION',
    summary: 'The worker Ignition config from the machine config server at https://<VIP>:22623/config/worker, applied to the host.',
  },
  {
    step: 'START_KUBELET',
    summary: 'kubelet starts, asks for its client and serving certificates (CSRs), registers the Node; the step ends when the Node is Ready.',
  },
];

export const STEP_CATALOGUE: readonly StepDescription[] = STEP_SUMMARIES.map(({ step, summary }) => ({
  step,
  title: message(`step.${step}.title` as const),
  summary,
  hint: message(`step.${step}.hint` as const),
}));

export function stepIndex(step: InstallStep): number {
  return INSTALL_STEPS.indexOf(step);
}

export function describeStep(step: InstallStep): StepDescription {
  const found = STEP_CATALOGUE.find((entry) => entry.step === step);
  if (!found) {
    throw new RangeError(`unknown install step ${String(step)}`);
  }
  return found;
}

export function isInstallStep(value: string): value is InstallStep {
  return (INSTALL_STEPS as readonly string[]).includes(value);
}

export interface StepEventLike {
  readonly seq: number;
  readonly step: InstallStep;
  readonly status: StepEventStatus;
  readonly progress?: number | null;
  readonly message?: string | null;
  /** `message` by its code and parameters, when it has them. */
  readonly coded?: Message | null;
  readonly at: Date;
}

export interface StepSummary {
  readonly step: InstallStep;
  readonly state: StepState;
  readonly progress: number;
  readonly message: string | null;
  readonly coded: Message | null;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
}

/**
 * Folds a run's step events (in any order, duplicates allowed) into one summary per
 * step, in catalogue order. Events are applied by sequence number, so a re-sent or
 * late event never moves a step backwards.
 */
export function summariseSteps(events: readonly StepEventLike[]): StepSummary[] {
  const ordered = [...events].sort((a, b) => a.seq - b.seq);
  return INSTALL_STEPS.map((step) => {
    let state: StepState = 'PENDING';
    let progress = 0;
    let message: string | null = null;
    let coded: Message | null = null;
    let startedAt: Date | null = null;
    let finishedAt: Date | null = null;
    for (const event of ordered) {
      if (event.step !== step) {
        continue;
      }
      if (event.message !== null && event.message !== undefined) {
        message = event.message;
        coded = event.coded ?? null;
      }
      if (event.status === 'STARTED') {
        // A retry starts the step again.
        state = 'RUNNING';
        progress = 0;
        startedAt = event.at;
        finishedAt = null;
      } else if (event.status === 'PROGRESS') {
        state = state === 'PENDING' ? 'RUNNING' : state;
        startedAt = startedAt ?? event.at;
        progress = clampProgress(event.progress ?? progress);
      } else {
        state = event.status;
        progress = event.status === 'SUCCEEDED' ? 100 : progress;
        startedAt = startedAt ?? event.at;
        finishedAt = event.at;
      }
    }
    return { step, state, progress, message, coded, startedAt, finishedAt };
  });
}

/**
 * The first step that has not succeeded: where a retried run resumes. Steps before
 * `startedAt` (where the summarised run itself resumed) succeeded in an earlier run.
 */
export function resumeStep(summaries: readonly StepSummary[], startedAt: InstallStep = 'PREFLIGHT'): InstallStep | null {
  const first = stepIndex(startedAt);
  return summaries.find((summary) => stepIndex(summary.step) >= first && summary.state !== 'SUCCEEDED')?.step ?? null;
}

function clampProgress(value: number): number {
  return Math.max(0, Math.min(100, Math.round(value)));
}
