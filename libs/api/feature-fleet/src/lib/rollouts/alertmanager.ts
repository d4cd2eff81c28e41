import { type CodedText, message } from '@ccos/shared/messages';

/** Which of some alerts fire now; the rollout asks before it starts a node. */
export interface FiringAlerts {
  /** The names among `names` of alerts active now (not silenced, not inhibited); a problem when it cannot tell. */
  firing(names: readonly string[]): Promise<{ readonly firing: readonly string[] } | { readonly problem: CodedText }>;
}

const TIMEOUT_MS = 5000;

/** Asks Alertmanager's v2 API which alerts are active, not silenced and not inhibited. */
export class AlertmanagerAlerts implements FiringAlerts {
  constructor(private readonly url: string) {}

  async firing(names: readonly string[]): Promise<{ readonly firing: readonly string[] } | { readonly problem: CodedText }> {
    const wanted = new Set(names);
    try {
      const response = await fetch(new URL('api/v2/alerts?active=true&silenced=false&inhibited=false', this.url.endsWith('/') ? this.url : `${this.url}/`), {
        signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: { accept: 'application/json' },
      });
      if (!response.ok) {
        return { problem: message('rollout.alertmanagerFailed', { url: this.url, error: `HTTP ${response.status}` }) };
      }
      const alerts = (await response.json()) as Array<{ labels?: Record<string, string> }>;
      const firing = new Set(alerts.map((alert) => alert.labels?.['alertname'] ?? '').filter((name) => wanted.has(name)));
      return { firing: [...firing].sort() };
    } catch (error) {
      return { problem: message('rollout.alertmanagerFailed', { url: this.url, error: error instanceof Error ? error.message : String(error) }) };
    }
  }
}
