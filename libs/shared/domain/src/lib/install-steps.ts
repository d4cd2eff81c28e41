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

export const INSTALL_RUN_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type InstallRunStatus = (typeof INSTALL_RUN_STATUSES)[number];

export interface StepDescription {
  readonly step: InstallStep;
  readonly title: { readonly en: string; readonly zh: string };
  readonly summary: string;
  /** Shown when the step fails and the agent gave no more specific hint. */
  readonly hint: { readonly en: string; readonly zh: string };
}

export const STEP_CATALOGUE: readonly StepDescription[] = [
  {
    step: 'PREFLIGHT',
    title: { en: 'Preflight checks', zh: '预检' },
    summary: 'Kernel, memory, CPUs, swap off, time synchronised, VIP:6443, VIP:22623 and the installer service reachable, hostname resolvable and unique.',
    hint: {
      en: 'Fix the failed check on the host (e.g. `swapoff -a`, `timedatectl set-ntp true`, open the firewall to the VIP), then retry.',
      zh: '在主机上修复未通过的检查项（例如 `swapoff -a`、`timedatectl set-ntp true`、放通到 VIP 的防火墙），然后重试。',
    },
  },
  {
    step: 'DOWNLOAD_BINARIES',
    title: { en: 'Download binaries', zh: '获取二进制程序' },
    summary: 'oc, hyperkube, kubelet, kube-apiserver, kube-controller-manager, kube-scheduler, ignition and coreos-installer from the installer service, sha256 verified.',
    hint: {
      en: 'Check that the host reaches the installer service and has free disk; a checksum mismatch means the artifact folder changed during the download.',
      zh: '确认主机能访问安装服务且有足够磁盘空间；校验和不一致说明下载期间制品目录发生了变化。',
    },
  },
  {
    step: 'INSTALL_PACKAGES',
    title: { en: 'Install packages', zh: '安装rpm包' },
    summary: 'The rpm set from the installer service, installed with the host package tool.',
    hint: {
      en: 'Read the rpm output: a conflict with an installed package or a missing dependency must be fixed on the host.',
      zh: '查看 rpm 的输出：与已安装软件包冲突或缺少依赖，需要在主机上修复。',
    },
  },
  {
    step: 'INSTALL_SERVICES',
    title: { en: 'Install systemd services', zh: '安装systemd服务' },
    summary: 'The systemd units from the installer service, then daemon-reload and enable.',
    hint: {
      en: 'Run `systemctl daemon-reload` and `systemctl status <unit>` on the host to see why a unit is rejected.',
      zh: '在主机上执行 `systemctl daemon-reload` 和 `systemctl status <unit>`，查看服务单元被拒绝的原因。',
    },
  },
  {
    step: 'APPLY_IGNITION',
    title: { en: 'Apply Ignition config', zh: '应用ignition配置' },
    summary: 'The worker Ignition config from the machine config server at https://<VIP>:22623/config/worker, applied to the host.',
    hint: {
      en: 'Check the machine config server through the VIP (`curl -k https://<VIP>:22623/config/worker`); an HTML answer usually comes from a load balancer.',
      zh: '通过 VIP 检查 machine config server（`curl -k https://<VIP>:22623/config/worker`）；返回 HTML 通常来自负载均衡器。',
    },
  },
  {
    step: 'START_KUBELET',
    title: { en: 'Start kubelet and join', zh: '启动kubelet并加入集群' },
    summary: 'kubelet starts, asks for its client and serving certificates (CSRs), registers the Node; the step ends when the Node is Ready.',
    hint: {
      en: 'Approve the node\'s pending CSRs; if none appear, read `journalctl -u kubelet` on the host (certificates, API reachability, image pulls).',
      zh: '批准该节点待处理的 CSR；如果没有出现 CSR，请在主机上查看 `journalctl -u kubelet`（证书、API 连通性、镜像拉取）。',
    },
  },
];

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
  readonly at: Date;
}

export interface StepSummary {
  readonly step: InstallStep;
  readonly state: StepState;
  readonly progress: number;
  readonly message: string | null;
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
    let startedAt: Date | null = null;
    let finishedAt: Date | null = null;
    for (const event of ordered) {
      if (event.step !== step) {
        continue;
      }
      message = event.message ?? message;
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
    return { step, state, progress, message, startedAt, finishedAt };
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
