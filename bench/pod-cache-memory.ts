/**
 * What a cluster connection's pod cache costs: the heap that 1,000 pods (a typical Deployment
 * pod as a kubeadm cluster serves it: managedFields, a projected service-account volume, probes,
 * env, status with conditions and container statuses) take in the informer's cache, indexed by
 * node, kept whole and as podForPlanning keeps them.
 *
 *   node --expose-gc --import tsx bench/pod-cache-memory.ts [pods]
 *
 * Prints figures; not part of the test suite.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { InformerCache, podForPlanning } from '@ccos/api/data-access-kube';
import { samplePod } from './support/sample-pod';

const PODS = Number(process.argv[2] ?? 1000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  throw new Error('run with node --expose-gc');
}

function podJson(i: number): string {
  return JSON.stringify(samplePod(i, `worker-${i % 50}`));
}

function heapOf(fill: (cache: InformerCache<V1Pod>) => void): number {
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const cache = new InformerCache<V1Pod>(() => undefined, { node: (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []) });
  fill(cache);
  gc?.();
  const used = process.memoryUsage().heapUsed - before;
  if (cache.list().length !== PODS) {
    throw new Error('lost pods');
  }
  return used;
}

const jsons = Array.from({ length: PODS }, (_, i) => podJson(i));
const whole = heapOf((cache) => jsons.forEach((json) => cache.apply('ADDED', JSON.parse(json) as V1Pod)));
const trimmed = heapOf((cache) => jsons.forEach((json) => cache.apply('ADDED', podForPlanning(JSON.parse(json) as V1Pod))));
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(0)} KiB`;
console.log(`pod JSON: ${jsons[0].length} bytes each`);
console.log(`${PODS} pods cached whole: ${kib(whole)} of heap (${(whole / PODS).toFixed(0)} bytes per pod)`);
console.log(`${PODS} pods as podForPlanning keeps them: ${kib(trimmed)} of heap (${(trimmed / PODS).toFixed(0)} bytes per pod)`);
