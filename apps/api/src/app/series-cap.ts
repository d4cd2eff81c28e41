import { Counter, type CounterConfiguration, Histogram, type HistogramConfiguration, type Registry } from 'prom-client';

/**
 * The most label sets one counter or histogram of this service keeps. Every label comes from a
 * fixed set (route names, operation names of the shared schema, enums, the names of registered
 * clusters and node groups), so this is a backstop: a label value that slips through from
 * somewhere unforeseen cannot grow `/metrics` and memory without bound.
 */
export const MAX_SERIES_PER_METRIC = 500;

/** The label value every label of a series past the cap gets, and of names outside a fixed set. */
export const OTHER_LABEL = 'other';

type Labels = Partial<Record<string, string | number>>;

/**
 * Admits label sets to one metric until it has `max` of them; a further new set is counted as
 * all-`other` (one series), and in `ccos_metric_series_capped_total{metric}`.
 */
export class SeriesCap {
  private readonly seen = new Set<string>();

  constructor(
    private readonly metric: string,
    /** The metric's label names: a label set's key is its values in this order (built per observation, so kept cheap). */
    private readonly labelNames: readonly string[],
    private readonly capped: Counter<'metric'>,
    private readonly max = MAX_SERIES_PER_METRIC,
  ) {}

  labels<T extends Labels>(labels: T): T {
    const key = this.labelNames.map((name) => String(labels[name] ?? '')).join('\u0000');
    if (this.seen.has(key)) {
      return labels;
    }
    if (this.seen.size < this.max) {
      this.seen.add(key);
      return labels;
    }
    this.capped.inc({ metric: this.metric });
    return Object.fromEntries(Object.keys(labels).map((name) => [name, OTHER_LABEL])) as T;
  }
}

/** Makes capped counters and histograms in `registry`, all reporting to one `ccos_metric_series_capped_total`. */
export class CappedMetrics {
  readonly capped: Counter<'metric'>;

  constructor(
    private readonly registry: Registry,
    private readonly max = MAX_SERIES_PER_METRIC,
  ) {
    this.capped = new Counter({
      name: 'ccos_metric_series_capped_total',
      help: `Observations whose new label set was counted as "other" because the metric already had ${max} label sets (a backstop: no label should take values from outside a fixed set)`,
      labelNames: ['metric'] as const,
      registers: [registry],
    });
  }

  counter<T extends string>(configuration: Omit<CounterConfiguration<T>, 'registers'>): Counter<T> {
    const counter = new Counter({ ...configuration, registers: [this.registry] });
    const cap = new SeriesCap(configuration.name, configuration.labelNames ?? [], this.capped, this.max);
    // prom-client binds inc (and observe) per instance in its constructor, so a subclass's method would be shadowed.
    const inc = counter.inc.bind(counter) as (labels?: Labels | number, value?: number) => void;
    counter.inc = ((labelsOrValue?: Labels | number, value?: number) =>
      typeof labelsOrValue === 'object' && labelsOrValue !== null ? inc(cap.labels(labelsOrValue), value) : inc(labelsOrValue)) as Counter<T>['inc'];
    return counter;
  }

  histogram<T extends string>(configuration: Omit<HistogramConfiguration<T>, 'registers'>): Histogram<T> {
    const histogram = new Histogram({ ...configuration, registers: [this.registry] });
    const cap = new SeriesCap(configuration.name, configuration.labelNames ?? [], this.capped, this.max);
    // startTimer's end() observes through this too. Exemplars are not enabled, so an object first argument is a label set.
    const observe = histogram.observe.bind(histogram) as (labels: Labels | number, value?: number) => void;
    histogram.observe = ((labelsOrValue: Labels | number, value?: number) =>
      typeof labelsOrValue === 'object' && labelsOrValue !== null ? observe(cap.labels(labelsOrValue), value) : observe(labelsOrValue)) as Histogram<T>['observe'];
    return histogram;
  }
}
