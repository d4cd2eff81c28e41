import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, freePort, startApiProcess } from '../support/api-process';
import { declaredMetrics, scrape } from '../support/metrics-text';
import { rulesOfPrometheusRule } from '../support/promtool';

const MONITORING = join(__dirname, '../../deploy/base/monitoring');
const DASHBOARD = join(MONITORING, 'grafana-dashboard.json');

/** What the expressions may name besides the service's own: Prometheus' scrape health and kube-state-metrics' series. */
const PROMETHEUS_SERIES = new Set(['up']);
const KUBE_STATE_METRICS = new Set(['kube_node_status_condition']);

/** Series a metric of each type exposes. */
function seriesOf(name: string, type: string): string[] {
  if (type === 'histogram') {
    return [`${name}_bucket`, `${name}_sum`, `${name}_count`];
  }
  return type === 'summary' ? [name, `${name}_sum`, `${name}_count`] : [name];
}

/**
 * The metric names a PromQL expression selects, read with Prometheus' own grammar (lezer-promql,
 * the parser of Prometheus' web UI). Grafana's `$__…` interval variables become a duration
 * first; other variables only appear inside label-matcher strings. Throws on a syntax error.
 */
function metricNamesIn(expr: string): string[] {
  const promql = expr.replace(/\$__(rate_)?interval|\$__range/g, '5m');
  const tree = parser.parse(promql);
  const names: string[] = [];
  const errors: number[] = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) {
        errors.push(node.from);
      }
      if (node.name === 'VectorSelector') {
        const identifier = node.node.getChild('Identifier');
        if (identifier) {
          names.push(promql.slice(identifier.from, identifier.to));
        }
      }
    },
  });
  if (errors.length > 0) {
    throw new Error(`not PromQL at ${errors.join(', ')}: ${promql}`);
  }
  return names;
}

interface DashboardPanel {
  title: string;
  targets?: Array<{ expr: string }>;
  panels?: DashboardPanel[];
}

interface Dashboard {
  panels: DashboardPanel[];
  templating: { list: Array<{ name: string; type: string; query?: { query: string } | string }> };
}

/** Every PromQL expression of the dashboard, named by where it is. */
function dashboardExpressions(dashboard: Dashboard): Array<{ where: string; expr: string }> {
  const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  const targets = panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr })));
  const variables = dashboard.templating.list
    .filter((variable) => variable.type === 'query')
    .map((variable) => {
      const query = typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
      // label_values(<series selector>, label) is Grafana's, not PromQL: its selector is.
      const selector = /^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$/.exec(query)?.[1] ?? query;
      return { where: `variable $${variable.name}`, expr: selector };
    });
  return [...targets, ...variables];
}

/** Every alert and recording rule expression of every PrometheusRule under deploy/base/monitoring. */
async function ruleExpressions(): Promise<Array<{ where: string; expr: string }>> {
  const files = (await readdir(MONITORING)).filter((file) => /\.ya?ml$/.test(file));
  const expressions: Array<{ where: string; expr: string }> = [];
  for (const file of files) {
    const text = await readFile(join(MONITORING, file), 'utf8');
    if (!/^kind: PrometheusRule$/m.test(text)) {
      continue;
    }
    const { groups } = await rulesOfPrometheusRule(join(MONITORING, file));
    for (const group of groups as Array<{ rules: Array<{ alert?: string; record?: string; expr: string }> }>) {
      for (const rule of group.rules) {
        expressions.push({ where: `${file}: ${rule.alert ?? rule.record}`, expr: rule.expr });
      }
    }
  }
  return expressions;
}

describe('the dashboard and the alert rules name only metrics that exist', () => {
  let api: ApiProcess;
  let exported: Set<string>;
  let declared: Map<string, string>;

  beforeAll(async () => {
    // As deployed: the ServiceMonitor scrapes the metrics listener (METRICS_PORT), not the main port.
    const metricsPort = await freePort();
    api = await startApiProcess({ env: { METRICS_PORT: String(metricsPort) } });
    declared = declaredMetrics(await scrape(`http://127.0.0.1:${metricsPort}`));
    exported = new Set([...declared].flatMap(([name, type]) => seriesOf(name, type)));
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('reads metric names with the PromQL grammar, and refuses what is not PromQL', () => {
    expect(metricNamesIn('histogram_quantile(0.95, sum by (le, step) (rate(ccos_install_step_duration_seconds_bucket{outcome="SUCCEEDED"}[$__rate_interval])))')).toEqual([
      'ccos_install_step_duration_seconds_bucket',
    ]);
    expect(metricNamesIn('max by (cluster) (a_seconds) > on () group_left () max(b_seconds) or absent(up{job="x"} == 1)')).toEqual(['a_seconds', 'b_seconds', 'up']);
    expect(() => metricNamesIn('sum by (cluster (ccos_nodes)')).toThrow(/not PromQL/);
  });

  it('the running service declares every domain metric (the list the README gives)', () => {
    for (const name of [
      'ccos_installs_in_progress',
      'ccos_installs_waiting',
      'ccos_install_step_duration_seconds',
      'ccos_install_runs_finished_total',
      'ccos_agent_event_lag_seconds',
      'ccos_nodes',
      'ccos_csrs_pending',
      'ccos_csrs_pending_oldest_age_seconds',
      'ccos_csr_approval_window_seconds',
      'ccos_csr_decisions_total',
      'ccos_csr_impostors_denied_total',
      'ccos_csr_approver_leader',
      'ccos_csr_approver_paused',
      'ccos_removals_in_progress',
      'ccos_removal_runs_finished_total',
      'ccos_evictions_refused_total',
      'ccos_removal_drain_blocked_seconds',
      'ccos_removal_drain_timeout_seconds',
      'ccos_ssh_sessions_in_use',
      'ccos_ssh_sessions_waiting',
    ]) {
      expect(declared.has(name), name).toBe(true);
    }
  });

  it('every expression of the dashboard and of the rules parses and names only exported series (kube_* from kube-state-metrics, up from Prometheus)', async () => {
    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
    const expressions = [...dashboardExpressions(dashboard), ...(await ruleExpressions())];
    expect(expressions.length).toBeGreaterThan(30);
    const unknown: string[] = [];
    for (const { where, expr } of expressions) {
      const names = metricNamesIn(expr);
      expect(names.length, `${where} selects no metric: ${expr}`).toBeGreaterThan(0);
      for (const name of names) {
        const known = name.startsWith('kube_') ? KUBE_STATE_METRICS.has(name) : exported.has(name) || PROMETHEUS_SERIES.has(name);
        if (!known) {
          unknown.push(`${where}: ${name}`);
        }
      }
    }
    expect(unknown).toEqual([]);
  });

  it('the dashboard shows every domain metric of the service', async () => {
    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
    const shown = new Set(dashboardExpressions(dashboard).flatMap(({ expr }) => metricNamesIn(expr)));
    const base = (series: string) => series.replace(/_(bucket|sum|count)$/, '');
    const shownMetrics = new Set([...shown].flatMap((series) => [series, base(series)]));
    // Sign-in, GraphQL operation, WebSocket limit and series-cap metrics are for troubleshooting the API itself; everything of the fleet is on the dashboard.
    const domain = [...declared.keys()].filter((name) => name.startsWith('ccos_') && !/^ccos_(login|password|graphql|websocket|metric_series)_/.test(name));
    expect(domain.filter((name) => !shownMetrics.has(name))).toEqual([]);
  });
});
