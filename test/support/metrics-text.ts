/** Reading the Prometheus text format the API serves at /metrics. */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Every sample of an exposition (comments skipped; label values unescaped). */
export function samplesOf(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) {
      continue;
    }
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1] ?? '', (pair[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))]),
    );
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

/** The one sample with exactly these labels, or undefined. */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  return samplesOf(text).find(
    (sample) => sample.name === name && Object.keys(sample.labels).length === wanted.length && wanted.every(([key, value]) => sample.labels[key] === value),
  )?.value;
}

/** The names and types a registry declares (`# TYPE name type`), samples or not. */
export function declaredMetrics(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/gm)].map((match) => [match[1] ?? '', match[2] ?? '']));
}

/** Fetches /metrics of a running API. */
export async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  if (!response.ok) {
    throw new Error(`/metrics answered ${response.status}`);
  }
  return response.text();
}
