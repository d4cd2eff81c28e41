import { describe, expect, it } from 'vitest';
import { promtool, rulesOfPrometheusRule } from '../support/promtool';

/**
 * The certificate alert rules the deployment ships (deploy/base/monitoring/certificate-alerts.yaml),
 * checked and unit-tested with the real promtool: series that must fire and series that must not.
 * promtool's clock starts at 0, so an expiry timestamp of N is N seconds after the test starts.
 */
const RULES = 'deploy/base/monitoring/certificate-alerts.yaml';
const DAY = 24 * 3600;
const YEAR = 365 * DAY;

const expiry = (node: string, kind: 'client' | 'serving') => `ccos_certificate_expiry_timestamp_seconds{cluster="lab", node="${node}", kind="${kind}"}`;
const pendingSince = (node: string) => `ccos_certificate_renewal_pending_since_timestamp_seconds{cluster="lab", node="${node}"}`;

/** The labels and annotations an alert of the rules has for a node (promtool compares both exactly). */
function expiringSoon(node: string, kind: string, left: string) {
  return {
    exp_labels: { severity: 'warning', cluster: 'lab', node, kind },
    exp_annotations: {
      summary: `The ${kind} certificate of node ${node} (cluster lab) expires in ${left}`,
      description: `The newest ${kind} certificate the cluster issued for ${node} expires within 7 days. Look for its renewal CSR in the console's certificates page (is renewal auto-approve on for the cluster? is the renewal left pending by a policy check?) and for the kubelet's certificate manager log on the node.`,
    },
  };
}

function renewalPending(node: string) {
  return {
    exp_labels: { severity: 'warning', cluster: 'lab', node },
    exp_annotations: {
      summary: `A serving-certificate renewal of node ${node} (cluster lab) has waited for over an hour`,
      description: 'The renewal CSR was not auto-approved: the console\'s certificates page names the failed check, or says that renewal auto-approve is off for the cluster. Approve or deny it there.',
    },
  };
}

describe('certificate alert rules (promtool)', () => {
  it('are valid rules', async () => {
    const { check } = await promtool(await rulesOfPrometheusRule(RULES));
    expect(check.output).toContain('SUCCESS');
    expect(check.ok, check.output).toBe(true);
  });

  it('fire for a certificate expiring within 7 days and a renewal pending over an hour; not for healthy nodes; renewals off → the expiry alert fires', async () => {
    const rules = await rulesOfPrometheusRule(RULES);
    const { test } = await promtool(rules, {
      tests: [
        {
          interval: '1m',
          input_series: [
            // worker-1: renewals off. Its serving certificate (8 days left at the start) is never
            // renewed; its renewal CSR waits from the start.
            { series: expiry('worker-1', 'serving'), values: `${8 * DAY}x1500` },
            { series: pendingSince('worker-1'), values: '0x1500' },
            // worker-2: renewals on. Same certificate, renewed after 30 minutes: its renewal waited 30 minutes.
            { series: expiry('worker-2', 'serving'), values: `${8 * DAY}x30 ${8 * DAY + YEAR}x1470` },
            { series: pendingSince('worker-2'), values: '0x30' },
            // worker-3: a client certificate with a year left, a serving one with 30 days: nothing to say.
            { series: expiry('worker-3', 'client'), values: `${YEAR}x1500` },
            { series: expiry('worker-3', 'serving'), values: `${30 * DAY}x1500` },
            // worker-4: a serving certificate with 6 days left from the start.
            { series: expiry('worker-4', 'serving'), values: `${6 * DAY}x1500` },
          ],
          alert_rule_test: [
            // Before the 10 minutes of `for:` have passed, nothing fires.
            { eval_time: '5m', alertname: 'CcosNodeCertificateExpiringSoon', exp_alerts: [] },
            { eval_time: '15m', alertname: 'CcosNodeCertificateExpiringSoon', exp_alerts: [expiringSoon('worker-4', 'serving', '5d 23h 45m 0s')] },
            // A renewal waiting 30 minutes is no alert yet; at 61 minutes only worker-1's still waits.
            { eval_time: '30m', alertname: 'CcosCertificateRenewalPending', exp_alerts: [] },
            { eval_time: '61m', alertname: 'CcosCertificateRenewalPending', exp_alerts: [renewalPending('worker-1')] },
            // A day and a quarter in: worker-1 (renewals off) is within 7 days; worker-2 was renewed and is not.
            {
              eval_time: '1470m',
              alertname: 'CcosNodeCertificateExpiringSoon',
              exp_alerts: [expiringSoon('worker-1', 'serving', '6d 23h 30m 0s'), expiringSoon('worker-4', 'serving', '4d 23h 30m 0s')],
            },
            { eval_time: '1470m', alertname: 'CcosNodeCertificateExpired', exp_alerts: [] },
          ],
        },
        {
          interval: '1m',
          input_series: [{ series: expiry('worker-5', 'client'), values: `${10 * 60}x30` }],
          alert_rule_test: [
            { eval_time: '9m', alertname: 'CcosNodeCertificateExpired', exp_alerts: [] },
            {
              eval_time: '11m',
              alertname: 'CcosNodeCertificateExpired',
              exp_alerts: [
                {
                  exp_labels: { severity: 'critical', cluster: 'lab', node: 'worker-5', kind: 'client' },
                  exp_annotations: {
                    summary: 'The client certificate of node worker-5 (cluster lab) has expired',
                    description: 'An expired serving certificate breaks kubectl logs, exec and metrics scraping on the node; an expired client certificate makes the node NotReady. Approve its renewal CSR or restart the kubelet to bootstrap again.',
                  },
                },
              ],
            },
          ],
        },
      ],
    });
    expect(test?.ok, test?.output).toBe(true);
    expect(test?.output).toContain('SUCCESS');
  });

  it('would catch a rule that never fires: the same tests fail on rules whose threshold is 1 day', async () => {
    const rules = await rulesOfPrometheusRule(RULES);
    const weakened = JSON.parse(JSON.stringify(rules).replace('< 7 * 24 * 3600', '< 1 * 24 * 3600')) as typeof rules;
    const { test } = await promtool(weakened, {
      tests: [
        {
          interval: '1m',
          input_series: [{ series: expiry('worker-1', 'serving'), values: `${8 * DAY}x1500` }],
          alert_rule_test: [{ eval_time: '1470m', alertname: 'CcosNodeCertificateExpiringSoon', exp_alerts: [expiringSoon('worker-1', 'serving', '6d 23h 30m 0s')] }],
        },
      ],
    });
    expect(test?.ok).toBe(false);
  });
});
