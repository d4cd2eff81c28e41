import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { promtool, rulesOfPrometheusRule } from '../support/promtool';

const ALERTS_FILE = join(__dirname, '../../deploy/base/monitoring/alerts.yaml');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface Group {
  name: string;
  rules: Rule[];
}

interface Series {
  readonly series: string;
  readonly values: string;
}

/** One promtool unit test: series, a time, and the alerts firing then (none: it must not fire). */
interface AlertCase {
  readonly shows: string;
  readonly series: readonly Series[];
  readonly at: string;
  readonly firing: ReadonlyArray<{ readonly labels: Record<string, string>; readonly summary: string }>;
}

/** Two replicas (a, b) scraped every minute; each alert has cases that fire and cases that must not. */
const CASES: Record<string, readonly AlertCase[]> = {
  NodeNotReady: [
    {
      shows: 'a node not Ready for 5 minutes fires; one back within 3 minutes, and the status="false" series, do not',
      series: [
        { series: 'kube_node_status_condition{condition="Ready",status="true",node="w1"}', values: '1 1 0x10' },
        { series: 'kube_node_status_condition{condition="Ready",status="false",node="w1"}', values: '0 0 1x10' },
        { series: 'kube_node_status_condition{condition="Ready",status="true",node="w2"}', values: '1 1 0 0 0 1x10' },
        { series: 'kube_node_status_condition{condition="Ready",status="false",node="w2"}', values: '0 0 1 1 1 0x10' },
      ],
      at: '8m',
      firing: [{ labels: { condition: 'Ready', status: 'true', node: 'w1', severity: 'warning' }, summary: 'Node w1 has not been Ready for 5 minutes' }],
    },
    {
      shows: 'not before 5 minutes',
      series: [{ series: 'kube_node_status_condition{condition="Ready",status="true",node="w1"}', values: '1 1 0x10' }],
      at: '6m',
      firing: [],
    },
  ],
  CcosNodeUnhealthy: [
    {
      shows: 'a node unhealthy for 10 minutes fires once per cluster although both replicas report it',
      series: [
        { series: 'ccos_node_health{cluster="lab",state="UNHEALTHY",instance="a"}', values: '0 1x15' },
        { series: 'ccos_node_health{cluster="lab",state="UNHEALTHY",instance="b"}', values: '0 1x15' },
        { series: 'ccos_node_health{cluster="lab",state="HEALTHY",instance="a"}', values: '2x16' },
      ],
      at: '13m',
      firing: [{ labels: { cluster: 'lab', severity: 'warning' }, summary: '1 node(s) of cluster lab unhealthy for 10 minutes' }],
    },
    {
      shows: 'a node back within 5 minutes, and healthy ones, do not',
      series: [
        { series: 'ccos_node_health{cluster="lab",state="UNHEALTHY",instance="a"}', values: '0 1x5 0x10' },
        { series: 'ccos_node_health{cluster="lab",state="HEALTHY",instance="a"}', values: '3x16' },
      ],
      at: '13m',
      firing: [],
    },
  ],
  CcosHostDrifted: [
    {
      shows: 'a drifted host fires once per cluster after 5 minutes although both replicas report it',
      series: [
        { series: 'ccos_host_state{cluster="lab",state="DRIFTED",instance="a"}', values: '0 1x10' },
        { series: 'ccos_host_state{cluster="lab",state="DRIFTED",instance="b"}', values: '0 1x10' },
        { series: 'ccos_host_state{cluster="lab",state="CURRENT",instance="a"}', values: '4x11' },
      ],
      at: '8m',
      firing: [{ labels: { cluster: 'lab', severity: 'warning' }, summary: '1 host(s) of cluster lab drifted from what their install wrote' }],
    },
    {
      shows: 'current and uninspected hosts do not',
      series: [
        { series: 'ccos_host_state{cluster="lab",state="CURRENT",instance="a"}', values: '4x11' },
        { series: 'ccos_host_state{cluster="lab",state="UNINSPECTED",instance="a"}', values: '1x11' },
      ],
      at: '8m',
      firing: [],
    },
  ],
  CcosRolloutPaused: [
    {
      shows: 'a rollout paused for 30 minutes fires once per cluster although both replicas report it',
      series: [
        { series: 'ccos_rollouts{cluster="lab",status="PAUSED",instance="a"}', values: '0 1x40' },
        { series: 'ccos_rollouts{cluster="lab",status="PAUSED",instance="b"}', values: '0 1x40' },
      ],
      at: '35m',
      firing: [{ labels: { cluster: 'lab', severity: 'warning' }, summary: 'A rollout of cluster lab has been paused for 30 minutes' }],
    },
    {
      shows: 'a running rollout, and one paused for 20 minutes then resumed, do not',
      series: [
        { series: 'ccos_rollouts{cluster="lab",status="RUNNING",instance="a"}', values: '1x40' },
        { series: 'ccos_rollouts{cluster="lab",status="PAUSED",instance="a"}', values: '0 1x20 0x20' },
      ],
      at: '35m',
      firing: [],
    },
  ],
  CcosHostsOutdated: [
    {
      shows: 'hosts on an older set for an hour fire, as information',
      series: [{ series: 'ccos_host_state{cluster="lab",state="OUTDATED",instance="a"}', values: '0 3x70' }],
      at: '65m',
      firing: [{ labels: { cluster: 'lab', severity: 'info' }, summary: '3 host(s) of cluster lab installed from an older artifact set' }],
    },
    {
      shows: 'not within the hour an import and the reinstalls take',
      series: [{ series: 'ccos_host_state{cluster="lab",state="OUTDATED",instance="a"}', values: '0 3x30 0x30' }],
      at: '50m',
      firing: [],
    },
  ],
  CcosRemediationHeld: [
    {
      shows: 'a hold lasting 5 minutes fires once per cluster although both replicas report it',
      series: [
        { series: 'ccos_remediation_held{cluster="lab",instance="a"}', values: '0 2x10' },
        { series: 'ccos_remediation_held{cluster="lab",instance="b"}', values: '0 2x10' },
      ],
      at: '7m',
      firing: [{ labels: { cluster: 'lab', severity: 'critical' }, summary: 'Remediation held in cluster lab: 2 members unhealthy, more than its cap' }],
    },
    {
      shows: 'a hold released within 3 minutes does not',
      series: [{ series: 'ccos_remediation_held{cluster="lab",instance="a"}', values: '0 2 2 2 0x6' }],
      at: '8m',
      firing: [],
    },
  ],
  CcosInstallStalled: [
    {
      shows: 'a node STALLED for 5 minutes fires once per cluster although both replicas report it',
      series: [
        { series: 'ccos_nodes{cluster="lab",status="STALLED",instance="a"}', values: '0 1x10' },
        { series: 'ccos_nodes{cluster="lab",status="STALLED",instance="b"}', values: '0 1x10' },
        { series: 'ccos_nodes{cluster="lab",status="INSTALLING",instance="a"}', values: '3x11' },
      ],
      at: '8m',
      firing: [{ labels: { cluster: 'lab', severity: 'warning' }, summary: '1 install(s) stalled in cluster lab' }],
    },
    {
      shows: 'stalled for 3 minutes, then heard again, and installs merely running, do not',
      series: [
        { series: 'ccos_nodes{cluster="lab",status="STALLED",instance="a"}', values: '0 1 1 1 0x10' },
        { series: 'ccos_nodes{cluster="lab",status="INSTALLING",instance="a"}', values: '3x14' },
      ],
      at: '10m',
      firing: [],
    },
  ],
  CcosInstallFailureRate: [
    {
      shows: 'every run failing for an hour fires',
      series: [
        { series: 'ccos_install_runs_finished_total{outcome="FAILED",failure_code="DISK_FULL",instance="a"}', values: '0+1x80' },
        { series: 'ccos_install_runs_finished_total{outcome="SUCCEEDED",failure_code="none",instance="a"}', values: '0x80' },
      ],
      at: '75m',
      firing: [{ labels: { severity: 'warning' }, summary: 'More than half of the install runs of the last hour failed' }],
    },
    {
      shows: 'a third failing does not',
      series: [
        { series: 'ccos_install_runs_finished_total{outcome="FAILED",failure_code="DISK_FULL",instance="a"}', values: '0+1x80' },
        { series: 'ccos_install_runs_finished_total{outcome="SUCCEEDED",failure_code="none",instance="b"}', values: '0+2x80' },
      ],
      at: '75m',
      firing: [],
    },
    {
      shows: 'two failures alone in an hour do not',
      series: [{ series: 'ccos_install_runs_finished_total{outcome="FAILED",failure_code="CHECKSUM_MISMATCH",instance="a"}', values: '0x10 1 2x70' }],
      at: '65m',
      firing: [],
    },
  ],
  CcosCsrPendingPastWindow: [
    {
      shows: 'the oldest pending CSR past the approval window fires for its cluster only',
      series: [
        { series: 'ccos_csr_approval_window_seconds{instance="a"}', values: '3600x30' },
        { series: 'ccos_csr_approval_window_seconds{instance="b"}', values: '3600x30' },
        { series: 'ccos_csrs_pending_oldest_age_seconds{cluster="lab",instance="a"}', values: '3000+60x30' },
        { series: 'ccos_csrs_pending_oldest_age_seconds{cluster="lab",instance="b"}', values: '3000+60x30' },
        { series: 'ccos_csrs_pending_oldest_age_seconds{cluster="other",instance="a"}', values: '0+60x30' },
      ],
      at: '15m',
      firing: [{ labels: { cluster: 'lab', severity: 'warning' }, summary: 'A CSR in cluster lab has been pending longer than the approval window' }],
    },
    {
      shows: 'a CSR younger than a longer window does not',
      series: [
        { series: 'ccos_csr_approval_window_seconds{instance="a"}', values: '7200x30' },
        { series: 'ccos_csrs_pending_oldest_age_seconds{cluster="lab",instance="a"}', values: '3000+60x30' },
      ],
      at: '15m',
      firing: [],
    },
  ],
  CcosCsrImpostorDenied: [
    {
      shows: 'one impostor denied fires at once',
      series: [
        { series: 'ccos_csr_impostors_denied_total{cluster="lab",instance="a"}', values: '0 0 1x10' },
        { series: 'ccos_csr_impostors_denied_total{cluster="other",instance="a"}', values: '0x12' },
      ],
      at: '4m',
      firing: [{ labels: { cluster: 'lab', severity: 'critical' }, summary: 'Impostor CSR(s) denied in cluster lab' }],
    },
    {
      shows: 'an impostor denied more than 10 minutes ago does not',
      series: [{ series: 'ccos_csr_impostors_denied_total{cluster="lab",instance="a"}', values: '0 0 1x30' }],
      at: '25m',
      firing: [],
    },
  ],
  CcosCsrDenialBurst: [
    {
      shows: 'denials of several deciders summed past 5 in 10 minutes fire',
      series: [
        { series: 'ccos_csr_decisions_total{cluster="lab",verdict="DENIED",decider="auto-approver",instance="a"}', values: '0x5 0+1x6' },
        { series: 'ccos_csr_decisions_total{cluster="lab",verdict="DENIED",decider="operator",instance="b"}', values: '0x5 0 1 2x4' },
      ],
      at: '11m',
      firing: [{ labels: { cluster: 'lab', severity: 'warning' }, summary: 'Many CSRs denied in 10 minutes in cluster lab' }],
    },
    {
      shows: 'three denials and many approvals do not',
      series: [
        { series: 'ccos_csr_decisions_total{cluster="lab",verdict="DENIED",decider="operator",instance="a"}', values: '0x5 1 2 3x4' },
        { series: 'ccos_csr_decisions_total{cluster="lab",verdict="APPROVED",decider="auto-approver",instance="a"}', values: '0+5x11' },
      ],
      at: '11m',
      firing: [],
    },
  ],
  CcosCsrApproverNoLeader: [
    {
      shows: 'no replica leading for a minute fires',
      series: [
        { series: 'ccos_csr_approver_leader{cluster="lab",instance="a"}', values: '1 1 0x10' },
        { series: 'ccos_csr_approver_leader{cluster="lab",instance="b"}', values: '0x12' },
      ],
      at: '5m',
      firing: [{ labels: { cluster: 'lab', severity: 'critical' }, summary: 'No replica holds the CSR auto-approver Lease of cluster lab' }],
    },
    {
      shows: 'a fail-over from a to b within a minute does not',
      series: [
        { series: 'ccos_csr_approver_leader{cluster="lab",instance="a"}', values: '1 1 0x10' },
        { series: 'ccos_csr_approver_leader{cluster="lab",instance="b"}', values: '0 0 0 1x10' },
      ],
      at: '5m',
      firing: [],
    },
  ],
  CcosCsrApproverPaused: [
    {
      shows: 'the leader holding approvals back fires at once',
      series: [
        { series: 'ccos_csr_approver_paused{cluster="lab",instance="a"}', values: '0 0 1x10' },
        { series: 'ccos_csr_approver_paused{cluster="other",instance="a"}', values: '0x12' },
      ],
      at: '5m',
      firing: [{ labels: { cluster: 'lab', severity: 'critical' }, summary: 'CSR auto-approval paused in cluster lab, too many CSRs pending' }],
    },
    {
      shows: 'approving again clears it',
      series: [{ series: 'ccos_csr_approver_paused{cluster="lab",instance="a"}', values: '1 1 0x10' }],
      at: '5m',
      firing: [],
    },
  ],
  CcosDrainBlockedByPdb: [
    {
      shows: 'a drain held past its timeout fires; one held past 15 minutes without a timeout too; one within its long timeout does not',
      series: [
        { series: 'ccos_removal_drain_blocked_seconds{cluster="lab",node="w1",instance="a"}', values: '0+60x30' },
        { series: 'ccos_removal_drain_timeout_seconds{cluster="lab",node="w1",instance="a"}', values: '600x30' },
        { series: 'ccos_removal_drain_blocked_seconds{cluster="lab",node="w2",instance="b"}', values: '0+60x30' },
        { series: 'ccos_removal_drain_timeout_seconds{cluster="lab",node="w2",instance="b"}', values: '0x30' },
        { series: 'ccos_removal_drain_blocked_seconds{cluster="lab",node="w3",instance="a"}', values: '0+60x30' },
        { series: 'ccos_removal_drain_timeout_seconds{cluster="lab",node="w3",instance="a"}', values: '3600x30' },
      ],
      at: '20m',
      firing: [
        { labels: { cluster: 'lab', node: 'w1', severity: 'warning' }, summary: 'The drain of w1 (lab) is held by a PodDisruptionBudget past its timeout' },
        { labels: { cluster: 'lab', node: 'w2', severity: 'warning' }, summary: 'The drain of w2 (lab) is held by a PodDisruptionBudget past its timeout' },
      ],
    },
    {
      shows: 'a drain without a timeout held for 12 minutes does not',
      series: [
        { series: 'ccos_removal_drain_blocked_seconds{cluster="lab",node="w2",instance="b"}', values: '0+60x30' },
        { series: 'ccos_removal_drain_timeout_seconds{cluster="lab",node="w2",instance="b"}', values: '0x30' },
      ],
      at: '12m',
      firing: [],
    },
  ],
  CcosRemovalFailed: [
    {
      shows: 'a failed removal fires',
      series: [{ series: 'ccos_removal_runs_finished_total{outcome="FAILED",instance="a"}', values: '0 0 1x10' }],
      at: '5m',
      firing: [{ labels: { severity: 'info' }, summary: 'A node removal failed in the last 30 minutes' }],
    },
    {
      shows: 'removals that succeed, and a failure an hour old, do not',
      series: [
        { series: 'ccos_removal_runs_finished_total{outcome="FAILED",instance="a"}', values: '0 0 1x70' },
        { series: 'ccos_removal_runs_finished_total{outcome="SUCCEEDED",instance="a"}', values: '0+1x70' },
      ],
      at: '65m',
      firing: [],
    },
  ],
  CcosScalerDown: [
    {
      shows: 'a replica not scraped for 2 minutes fires; other jobs do not',
      series: [
        { series: 'up{job="ccos-scaler",instance="10.0.0.1:4000"}', values: '1 1 0x10' },
        { series: 'up{job="ccos-scaler",instance="10.0.0.2:4000"}', values: '1x12' },
        { series: 'up{job="node-exporter",instance="10.0.0.3:9100"}', values: '0x12' },
      ],
      at: '5m',
      firing: [{ labels: { job: 'ccos-scaler', instance: '10.0.0.1:4000', severity: 'warning' }, summary: 'ccos-scaler replica 10.0.0.1:4000 is down' }],
    },
    {
      shows: 'a restart within a minute does not',
      series: [{ series: 'up{job="ccos-scaler",instance="10.0.0.1:4000"}', values: '1 1 0 1x10' }],
      at: '5m',
      firing: [],
    },
  ],
  CcosScalerAbsent: [
    {
      shows: 'every replica down fires',
      series: [
        { series: 'up{job="ccos-scaler",instance="10.0.0.1:4000"}', values: '1 1 0x10' },
        { series: 'up{job="ccos-scaler",instance="10.0.0.2:4000"}', values: '0x12' },
      ],
      at: '6m',
      firing: [{ labels: { severity: 'critical' }, summary: 'No ccos-scaler replica is up' }],
    },
    {
      shows: 'no series at all (nothing scraped) fires too',
      series: [{ series: 'up{job="node-exporter",instance="10.0.0.3:9100"}', values: '1x12' }],
      at: '6m',
      firing: [{ labels: { severity: 'critical' }, summary: 'No ccos-scaler replica is up' }],
    },
    {
      shows: 'one replica of two up does not',
      series: [
        { series: 'up{job="ccos-scaler",instance="10.0.0.1:4000"}', values: '1 1 0x10' },
        { series: 'up{job="ccos-scaler",instance="10.0.0.2:4000"}', values: '1x12' },
      ],
      at: '6m',
      firing: [],
    },
  ],
  CcosSshSessionsSaturated: [
    {
      shows: 'sessions waiting for 10 minutes fire',
      series: [{ series: 'ccos_ssh_sessions_waiting{instance="a"}', values: '0 3x15' }],
      at: '13m',
      firing: [{ labels: { severity: 'info' }, summary: 'SSH sessions have waited for a free slot for 10 minutes' }],
    },
    {
      shows: 'a short queue does not',
      series: [{ series: 'ccos_ssh_sessions_waiting{instance="a"}', values: '0 3x5 0x10' }],
      at: '13m',
      firing: [],
    },
  ],
  CcosAgentEventLagHigh: [
    {
      shows: 'events arriving 1 to 5 minutes late for 10 minutes fire',
      series: [
        { series: 'ccos_agent_event_lag_seconds_bucket{le="1",instance="a"}', values: '0x30' },
        { series: 'ccos_agent_event_lag_seconds_bucket{le="60",instance="a"}', values: '0x30' },
        { series: 'ccos_agent_event_lag_seconds_bucket{le="300",instance="a"}', values: '0+10x30' },
        { series: 'ccos_agent_event_lag_seconds_bucket{le="+Inf",instance="a"}', values: '0+10x30' },
      ],
      at: '25m',
      firing: [{ labels: { severity: 'info' }, summary: 'Install agents\' events arrive more than a minute late (95th percentile)' }],
    },
    {
      shows: 'events within a second do not',
      series: [
        { series: 'ccos_agent_event_lag_seconds_bucket{le="1",instance="a"}', values: '0+10x30' },
        { series: 'ccos_agent_event_lag_seconds_bucket{le="60",instance="a"}', values: '0+10x30' },
        { series: 'ccos_agent_event_lag_seconds_bucket{le="300",instance="a"}', values: '0+10x30' },
        { series: 'ccos_agent_event_lag_seconds_bucket{le="+Inf",instance="a"}', values: '0+10x30' },
      ],
      at: '25m',
      firing: [],
    },
  ],
  CcosJobsFailed: [
    {
      shows: 'a failed job fires once although both replicas report it',
      series: [
        { series: 'ccos_jobs{state="failed",instance="a"}', values: '0 0 2x10' },
        { series: 'ccos_jobs{state="failed",instance="b"}', values: '0 0 2x10' },
        { series: 'ccos_jobs{state="waiting",instance="a"}', values: '5x12' },
      ],
      at: '5m',
      firing: [{ labels: { severity: 'warning' }, summary: '2 background job(s) failed every attempt' }],
    },
    {
      shows: 'jobs waiting and running (retries included) do not, nor a failed job retried within a minute',
      series: [
        { series: 'ccos_jobs{state="failed",instance="a"}', values: '0 0 1 0x10' },
        { series: 'ccos_jobs{state="waiting",instance="a"}', values: '40x12' },
        { series: 'ccos_jobs{state="running",instance="a"}', values: '10x12' },
      ],
      at: '5m',
      firing: [],
    },
  ],
};

/**
 * The rules with each alert's `summary` as its only annotation: promtool compares annotations
 * exactly, and the summaries (with their templates filled in) are what the cases check; the
 * descriptions go through `promtool check rules` with everything else.
 */
function withSummariesOnly(rules: { groups: unknown[] }): { groups: Group[] } {
  return {
    groups: (rules.groups as Group[]).map((group) => ({
      ...group,
      rules: group.rules.map((rule) => (rule.alert ? { ...rule, annotations: { summary: rule.annotations?.['summary'] ?? '' } } : rule)),
    })),
  };
}

function unitTestsOf(alert: string, cases: readonly AlertCase[]) {
  return {
    tests: cases.map((entry) => ({
      name: `${alert}: ${entry.shows}`,
      interval: '1m',
      input_series: entry.series.map((series) => ({ ...series })),
      alert_rule_test: [
        {
          eval_time: entry.at,
          alertname: alert,
          exp_alerts: entry.firing.map((firing) => ({ exp_labels: firing.labels, exp_annotations: { summary: firing.summary } })),
        },
      ],
    })),
  };
}

describe('alert rules (deploy/base/monitoring/alerts.yaml) with the real promtool', () => {
  let rules: { groups: unknown[] };
  let alerts: Rule[];

  beforeAll(async () => {
    rules = await rulesOfPrometheusRule(ALERTS_FILE);
    alerts = (rules.groups as Group[]).flatMap((group) => group.rules).filter((rule) => rule.alert);
  });

  it('pass promtool check rules, and promtool refuses a broken copy (the check can fail)', async () => {
    const { check } = await promtool(rules);
    expect(check.output).toContain('SUCCESS');
    expect(check.ok, check.output).toBe(true);
    const broken = { groups: [{ name: 'broken', rules: [{ alert: 'Broken', expr: 'sum by (cluster (ccos_nodes)' }] }] };
    const refused = (await promtool(broken)).check;
    expect(refused.ok).toBe(false);
    expect(refused.output).toMatch(/parse error|unexpected/);
  });

  it('has every alert the issue and an operator expect, each with a severity, a summary and a description', () => {
    expect(alerts.map((rule) => rule.alert).sort()).toEqual(Object.keys(CASES).sort());
    for (const rule of alerts) {
      expect(['critical', 'warning', 'info'], rule.alert).toContain(rule.labels?.['severity']);
      expect(rule.annotations?.['summary'], rule.alert).toBeTruthy();
      expect(rule.annotations?.['description'], rule.alert).toBeTruthy();
    }
    expect(alerts.find((rule) => rule.alert === 'NodeNotReady')).toMatchObject({ expr: 'kube_node_status_condition{condition="Ready",status="true"} == 0', for: '5m' });
  });

  it('gives every alert a case that fires and one that must not', () => {
    for (const [alert, cases] of Object.entries(CASES)) {
      expect(cases.some((entry) => entry.firing.length > 0), `${alert} fires`).toBe(true);
      expect(cases.some((entry) => entry.firing.length === 0), `${alert} stays quiet`).toBe(true);
    }
  });

  it.each(Object.entries(CASES))('%s fires exactly when it should (promtool test rules)', async (alert, cases) => {
    const result = await promtool(withSummariesOnly(rules), unitTestsOf(alert, cases));
    expect(result.check.ok, result.check.output).toBe(true);
    expect(result.test?.ok, result.test?.output).toBe(true);
    expect(result.test?.output).toContain('SUCCESS');
  });

  it('promtool test rules fails a case whose expectation is wrong (the unit tests can fail)', async () => {
    const [first] = CASES['NodeNotReady'] ?? [];
    const wrong: AlertCase = { ...(first as AlertCase), firing: [] };
    const result = await promtool(withSummariesOnly(rules), unitTestsOf('NodeNotReady', [wrong]));
    expect(result.test?.ok).toBe(false);
    expect(result.test?.output).toContain('FAILED');
  });
});
