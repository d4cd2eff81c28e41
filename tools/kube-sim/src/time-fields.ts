import { badRequest } from './api-error';
import { isJsonObject, type JsonObject, type JsonValue } from './json-value';
import type { KubeObject } from './kube-object';
import type { ResourceDefinition } from './resource-definition';
import { resourceId } from './resource-definition';

/** metav1.Time (RFC 3339, stored at second precision) or metav1.MicroTime (exactly six fractional digits). */
type TimeKind = 'time' | 'micro';

const META = ['metadata.creationTimestamp', 'metadata.deletionTimestamp', 'metadata.managedFields[].time'];
const CONDITIONS = ['status.conditions[].lastTransitionTime'];
const CONTAINER_STATE = ['state.running.startedAt', 'state.terminated.startedAt', 'state.terminated.finishedAt', 'lastState.running.startedAt', 'lastState.terminated.startedAt', 'lastState.terminated.finishedAt'];
const POD_STATUS = [
  'status.startTime',
  'status.conditions[].lastProbeTime',
  'status.conditions[].lastTransitionTime',
  ...['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses'].flatMap((list) => CONTAINER_STATE.map((p) => `status.${list}[].${p}`)),
];
const TEMPLATE = ['spec.template.metadata.creationTimestamp'];

/** Every Time and MicroTime field of the kinds kube-sim stores, by resource. */
const FIELDS: Readonly<Record<string, readonly (readonly [string, TimeKind])[]>> = {
  'v1/pods': POD_STATUS.map((p) => [p, 'time'] as const),
  'v1/nodes': [
    ['spec.taints[].timeAdded', 'time'],
    ['status.conditions[].lastHeartbeatTime', 'time'],
    ['status.conditions[].lastTransitionTime', 'time'],
  ],
  'v1/namespaces': CONDITIONS.map((p) => [p, 'time'] as const),
  'v1/events': [
    ['firstTimestamp', 'time'],
    ['lastTimestamp', 'time'],
    ['eventTime', 'micro'],
    ['series.lastObservedTime', 'micro'],
  ],
  'coordination.k8s.io/v1/leases': [
    ['spec.acquireTime', 'micro'],
    ['spec.renewTime', 'micro'],
  ],
  'certificates.k8s.io/v1/certificatesigningrequests': [
    ['status.conditions[].lastUpdateTime', 'time'],
    ['status.conditions[].lastTransitionTime', 'time'],
  ],
  'policy/v1/poddisruptionbudgets': [
    ['status.disruptedPods{}', 'time'],
    ['status.conditions[].lastTransitionTime', 'time'],
  ],
  'apps/v1/deployments': [...TEMPLATE.map((p) => [p, 'time'] as const), ['status.conditions[].lastUpdateTime', 'time'], ['status.conditions[].lastTransitionTime', 'time']],
  'apps/v1/replicasets': [...TEMPLATE, ...CONDITIONS].map((p) => [p, 'time'] as const),
  'apps/v1/daemonsets': [...TEMPLATE, ...CONDITIONS].map((p) => [p, 'time'] as const),
  'apps/v1/statefulsets': [...TEMPLATE, ...CONDITIONS].map((p) => [p, 'time'] as const),
};

const RFC3339 = '2006-01-02T15:04:05Z07:00';
const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

class TimeParseError extends Error {}

/**
 * Go's time.Parse of RFC3339 (fractional seconds optional) or RFC3339Micro (exactly six), with its
 * error text: `parsing time "x" as "layout": cannot parse "rest" as "element"`. Returns epoch
 * milliseconds and the microseconds within the second.
 */
function parseGoTime(value: string, kind: TimeKind): { ms: number; micros: number } {
  const layout = kind === 'micro' ? RFC3339_MICRO : RFC3339;
  let pos = 0;
  const fail = (element: string): never => {
    throw new TimeParseError(`parsing time ${JSON.stringify(value)} as ${JSON.stringify(layout)}: cannot parse ${JSON.stringify(value.slice(pos))} as ${JSON.stringify(element)}`);
  };
  const digits = (count: number, element: string): number => {
    const part = value.slice(pos, pos + count);
    if (!new RegExp(`^\\d{${count}}$`).test(part)) {
      fail(element);
    }
    pos += count;
    return Number(part);
  };
  const literal = (text: string): void => {
    if (value.slice(pos, pos + text.length) !== text) {
      fail(text);
    }
    pos += text.length;
  };
  const year = digits(4, '2006');
  literal('-');
  const month = digits(2, '01');
  literal('-');
  const day = digits(2, '02');
  literal('T');
  const hour = digits(2, '15');
  literal(':');
  const minute = digits(2, '04');
  literal(':');
  const second = digits(2, '05');
  let micros = 0;
  if (kind === 'micro') {
    const fraction = value.slice(pos, pos + 7);
    if (!/^\.\d{6}$/.test(fraction)) {
      fail('.000000');
    }
    micros = Number(fraction.slice(1));
    pos += 7;
  } else {
    const fraction = /^[.,]\d+/.exec(value.slice(pos));
    if (fraction) {
      micros = Math.floor(Number(`0.${fraction[0].slice(1)}`) * 1e6);
      pos += fraction[0].length;
    }
  }
  let offsetMinutes = 0;
  if (value[pos] === 'Z') {
    pos += 1;
  } else {
    const zone = /^([+-])(\d{2}):(\d{2})/.exec(value.slice(pos));
    if (!zone) {
      fail('Z07:00');
    } else {
      offsetMinutes = (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3]));
      pos += zone[0].length;
    }
  }
  if (pos !== value.length) {
    throw new TimeParseError(`parsing time ${JSON.stringify(value)}: extra text: ${JSON.stringify(value.slice(pos))}`);
  }
  if (month < 1 || month > 12) {
    throw new TimeParseError(`parsing time ${JSON.stringify(value)}: month out of range`);
  }
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    throw new TimeParseError(`parsing time ${JSON.stringify(value)}: ${date.getUTCDate() !== day ? 'day' : hour > 23 ? 'hour' : minute > 59 ? 'minute' : 'second'} out of range`);
  }
  return { ms: date.getTime() - offsetMinutes * 60_000, micros };
}

/** The value as the API server stores and answers it: UTC, seconds (Time) or microseconds (MicroTime). */
function normalize(value: JsonValue, kind: TimeKind): JsonValue {
  if (value === null) {
    return null;
  }
  if (typeof value !== 'string') {
    throw new TimeParseError(`json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value === 'object' ? 'object' : typeof value} into Go value of type string`);
  }
  const { ms, micros } = parseGoTime(value, kind);
  const iso = new Date(ms).toISOString().slice(0, 19);
  return kind === 'micro' ? `${iso}.${String(micros).padStart(6, '0')}Z` : `${iso}Z`;
}

function visit(container: JsonObject, steps: readonly string[], kind: TimeKind): void {
  const [step, ...rest] = steps;
  const array = step.endsWith('[]');
  const map = step.endsWith('{}');
  const key = array || map ? step.slice(0, -2) : step;
  if (!(key in container)) {
    return;
  }
  const value = container[key];
  if (array) {
    if (Array.isArray(value)) {
      for (const item of value) {
        if (isJsonObject(item) && rest.length > 0) {
          visit(item, rest, kind);
        }
      }
    }
    return;
  }
  if (map) {
    if (isJsonObject(value)) {
      for (const [entry, time] of Object.entries(value)) {
        value[entry] = normalize(time, kind);
      }
    }
    return;
  }
  if (rest.length === 0) {
    container[key] = normalize(value, kind);
  } else if (isJsonObject(value)) {
    visit(value, rest, kind);
  }
}

/**
 * Decodes the Time and MicroTime fields of an incoming object as the API server's JSON decoding
 * does: a value Go's parser refuses is 400 (`<Kind> in version "v1" cannot be handled as a <Kind>:
 * parsing time ...`), e.g. a Lease renewTime from `toISOString()` with three fractional digits; an
 * accepted one is stored in the server's form (UTC; Time truncated to seconds).
 * @see https://github.com/kubernetes/apimachinery/blob/master/pkg/apis/meta/v1/micro_time.go
 */
export function decodeTimes(def: ResourceDefinition, obj: KubeObject): void {
  const paths = [...META.map((p) => [p, 'time'] as const), ...(FIELDS[resourceId(def)] ?? [])];
  try {
    for (const [path, kind] of paths) {
      visit(obj as unknown as JsonObject, path.split('.'), kind);
    }
  } catch (error) {
    if (error instanceof TimeParseError) {
      throw badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${error.message}`);
    }
    throw error;
  }
}
