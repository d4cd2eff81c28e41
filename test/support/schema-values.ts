import {
  type GraphQLArgument,
  type GraphQLInputField,
  type GraphQLInputType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
} from 'graphql';
import { isSecretMarked } from './schema-requests';

/** A small seeded generator (mulberry32): the same seed gives the same requests. */
export class Random {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  word(length: number): string {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    return Array.from({ length }, () => alphabet[this.int(alphabet.length)]).join('');
  }
}

/** What a sampler needs to know about the world it sends to. */
export interface SampleContext {
  readonly random: Random;
  /** An id for an argument or field named `name` (clusterId, nodeId, runId, id …). */
  readonly idFor: (name: string) => string;
  /** A fresh secret for a `@secret` position; the caller tracks it. */
  readonly secretFor: (position: string, name: string) => string;
  /** The API server URL to register (a kube-sim). */
  readonly apiServerUrl: string;
  /** A kubeconfig whose user token is `token`. */
  readonly kubeconfigWith: (token: string) => string;
  /** Optional input fields (`Type.field`) to leave out, e.g. one of two alternative credentials. */
  readonly omit?: ReadonlySet<string>;
}

/**
 * A plausible value for an argument or input field, by its type and name: what a real client
 * would send, so that requests get past validation to the services. Every `@secret` position is
 * filled (also optional ones), each with a fresh secret.
 */
export function plausibleValue(definition: GraphQLArgument | GraphQLInputField, position: string, context: SampleContext, depth = 0): unknown {
  return plausibleOf(definition.type, definition.name, isSecretMarked(definition), position, context, depth);
}

function plausibleOf(type: GraphQLInputType, name: string, secret: boolean, position: string, context: SampleContext, depth: number): unknown {
  const nullable = getNullableType(type);
  const { random } = context;
  if (isListType(nullable)) {
    return depth > 3 ? [] : Array.from({ length: random.int(2) }, () => plausibleOf(nullable.ofType, name, secret, position, context, depth + 1));
  }
  if (isInputObjectType(nullable)) {
    const value: Record<string, unknown> = {};
    for (const field of Object.values(nullable.getFields())) {
      const required = isNonNullType(field.type) && field.defaultValue === undefined;
      const marked = isSecretMarked(field);
      const fieldPosition = `${nullable.name}.${field.name}`;
      if (required || ((marked || random.chance(0.5)) && !context.omit?.has(fieldPosition))) {
        value[field.name] = plausibleOf(field.type, field.name, marked, fieldPosition, context, depth + 1);
      }
    }
    return value;
  }
  if (isEnumType(nullable)) {
    return random.pick(nullable.getValues()).name;
  }
  if (!isScalarType(nullable)) {
    return null;
  }
  if (secret) {
    const value = context.secretFor(position, name);
    return name === 'kubeconfig' ? context.kubeconfigWith(value) : value;
  }
  switch (nullable.name) {
    case 'ID':
      return context.idFor(name);
    case 'Int':
      return plausibleInt(name, random);
    case 'Float':
      return random.int(100);
    case 'Boolean':
      return random.chance(0.5);
    case 'DateTimeISO':
      return new Date().toISOString();
    case 'JSONObject':
    case 'JSON':
      return { note: `fz-${random.word(6)}`, lines: ['a', 'b\nc'] };
    default:
      return plausibleString(name, random, context);
  }
}

function plausibleInt(name: string, random: Random): number {
  switch (name) {
    case 'first':
      return 1 + random.int(50);
    case 'sshPort':
      return 22;
    case 'progress':
      return random.int(101);
    case 'seq':
      return 1 + random.int(1000);
    case 'gracePeriodSeconds':
      return -1;
    case 'timeoutSeconds':
      return random.int(3);
    default:
      return random.int(10);
  }
}

function plausibleString(name: string, random: Random, context: SampleContext): string {
  const lower = name.toLowerCase();
  if (lower === 'username') {
    return `fz-u${random.word(6)}`;
  }
  if (lower === 'hostname' || lower === 'confirmhostname') {
    return `fz-h${random.word(6)}`;
  }
  if (lower === 'ip' || lower === 'vip') {
    return `198.18.${random.int(255)}.${1 + random.int(254)}`;
  }
  if (lower === 'apiserverurl') {
    return context.apiServerUrl;
  }
  if (lower === 'name') {
    return `fz-${random.word(8)}`;
  }
  if (lower === 'sshuser') {
    return 'root';
  }
  if (lower === 'key') {
    return `fz.example/k${random.word(4)}`;
  }
  if (lower === 'value') {
    return `v${random.word(4)}`;
  }
  if (lower === 'effect') {
    return random.pick(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
  }
  if (lower === 'fingerprint') {
    return `SHA256:${random.word(43)}`;
  }
  if (lower.endsWith('cacert')) {
    return '-----BEGIN CERTIFICATE-----\nMIIBfz\n-----END CERTIFICATE-----\n';
  }
  if (lower === 'password' || lower === 'newpassword' || lower === 'currentpassword') {
    return `fz-password-${random.word(12)}`;
  }
  return `fz ${random.word(8)}`;
}
