import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CappedMetrics } from './series-cap';

describe('CappedMetrics', () => {
  it('keeps at most its cap of label sets per metric and counts the rest as one `other` series', async () => {
    const registry = new Registry();
    const capped = new CappedMetrics(registry, 10);
    const counter = capped.counter({ name: 'test_requests_total', help: 'test', labelNames: ['path', 'status'] as const });
    const histogram = capped.histogram({ name: 'test_duration_seconds', help: 'test', labelNames: ['path'] as const, buckets: [1] });
    for (let index = 0; index < 5000; index++) {
      counter.inc({ path: `/hostile/${index}`, status: '200' });
      histogram.startTimer({ path: `/hostile/${index}` })();
    }
    counter.inc({ path: '/hostile/3', status: '200' });

    const values = (await counter.get()).values;
    expect(values).toHaveLength(11);
    expect(values.find((value) => value.labels.path === 'other')).toMatchObject({ labels: { path: 'other', status: 'other' }, value: 4990 });
    expect(values.find((value) => value.labels.path === '/hostile/3')?.value).toBe(2);
    expect(new Set((await histogram.get()).values.map((value) => value.labels.path)).size).toBe(11);
    const text = await registry.metrics();
    expect(text).toContain('ccos_metric_series_capped_total{metric="test_requests_total"} 4990');
    expect(text).toContain('ccos_metric_series_capped_total{metric="test_duration_seconds"} 4990');
  });
});
