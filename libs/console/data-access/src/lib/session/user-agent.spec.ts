import { describe, expect, it } from 'vitest';
import { userAgentSummary } from './user-agent';

describe('the client a session list names', () => {
  it.each([
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'Chrome 131 · Linux'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86', 'Edge 131 · Windows'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox 133 · macOS'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1', 'Safari 18 · iOS'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/130.0.0.0 Safari/537.36', 'Chrome 130 · Linux'],
    ['curl/8.11.0', 'curl 8'],
  ])('names %s as %s', (userAgent, summary) => {
    expect(userAgentSummary(userAgent)).toBe(summary);
  });

  it('shows an unknown client as it is, shortened, and nothing without one', () => {
    expect(userAgentSummary('ccos-scaler/1.0')).toBe('ccos-scaler/1.0');
    const long = `some-robot/${'x'.repeat(80)}`;
    expect(userAgentSummary(long)).toHaveLength(60);
    expect(userAgentSummary(long).endsWith('…')).toBe(true);
    expect(userAgentSummary(null)).toBe('');
  });
});
