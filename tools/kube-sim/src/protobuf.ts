import { badRequest, unsupportedMediaType } from './api-error';
import { kubeTime } from './kube-object';
import type { JsonObject, JsonValue } from './json-value';

/** Media type of Kubernetes' protobuf encoding. */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
/** Unix seconds of Go's zero time.Time, what an unset metav1.Time encodes as. */
const GO_ZERO_TIME_SECONDS = -62135596800;
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type FieldType = 'string' | 'bytes' | 'int' | 'bool' | 'time' | Message | { map: 'string' | 'bytes' | Message };
interface Field {
  name: string;
  type: FieldType;
  repeated?: boolean;
}
type Message = Record<number, Field>;

const TIME: Message = { 1: { name: 'seconds', type: 'int' }, 2: { name: 'nanos', type: 'int' } };
const OWNER_REFERENCE: Message = {
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool' },
  7: { name: 'blockOwnerDeletion', type: 'bool' },
};
const OBJECT_META: Message = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'generation', type: 'int' },
  8: { name: 'creationTimestamp', type: 'time' },
  9: { name: 'deletionTimestamp', type: 'time' },
  10: { name: 'deletionGracePeriodSeconds', type: 'int' },
  11: { name: 'labels', type: { map: 'string' } },
  12: { name: 'annotations', type: { map: 'string' } },
  13: { name: 'ownerReferences', type: OWNER_REFERENCE, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
};
const EXTRA_VALUE: Message = { 1: { name: 'items', type: 'string', repeated: true } };
const CSR_CONDITION: Message = {
  1: { name: 'type', type: 'string' },
  6: { name: 'status', type: 'string' },
  2: { name: 'reason', type: 'string' },
  3: { name: 'message', type: 'string' },
  4: { name: 'lastUpdateTime', type: 'time' },
  5: { name: 'lastTransitionTime', type: 'time' },
};
/** certificates.k8s.io/v1 CertificateSigningRequest (k8s.io/api/certificates/v1/generated.proto). */
const CSR: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: {
    name: 'spec',
    type: {
      1: { name: 'request', type: 'bytes' },
      7: { name: 'signerName', type: 'string' },
      8: { name: 'expirationSeconds', type: 'int' },
      5: { name: 'usages', type: 'string', repeated: true },
      2: { name: 'username', type: 'string' },
      3: { name: 'uid', type: 'string' },
      4: { name: 'groups', type: 'string', repeated: true },
      6: { name: 'extra', type: { map: EXTRA_VALUE } },
    },
  },
  3: { name: 'status', type: { 1: { name: 'conditions', type: CSR_CONDITION, repeated: true }, 2: { name: 'certificate', type: 'bytes' } } },
};

/** k8s.io/api/core/v1/generated.proto: the kinds `kubectl create namespace|configmap|secret` send. */
const NAMESPACE: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: { name: 'spec', type: { 1: { name: 'finalizers', type: 'string', repeated: true } } },
  3: { name: 'status', type: { 1: { name: 'phase', type: 'string' } } },
};
const CONFIG_MAP: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: { name: 'data', type: { map: 'string' } },
  3: { name: 'binaryData', type: { map: 'bytes' } },
  4: { name: 'immutable', type: 'bool' },
};
const SECRET: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: { name: 'data', type: { map: 'bytes' } },
  3: { name: 'type', type: 'string' },
  4: { name: 'stringData', type: { map: 'string' } },
  5: { name: 'immutable', type: 'bool' },
};

const OBJECT_REFERENCE: Message = {
  1: { name: 'kind', type: 'string' },
  2: { name: 'namespace', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'fieldPath', type: 'string' },
};
/** What `kubectl create serviceaccount` sends. */
const SERVICE_ACCOUNT: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: { name: 'secrets', type: OBJECT_REFERENCE, repeated: true },
  3: { name: 'imagePullSecrets', type: { 1: { name: 'name', type: 'string' } }, repeated: true },
  4: { name: 'automountServiceAccountToken', type: 'bool' },
};
/** authentication.k8s.io/v1 TokenRequest (k8s.io/api/authentication/v1/generated.proto): what `kubectl create token` sends. */
const TOKEN_REQUEST: Message = {
  1: { name: 'metadata', type: OBJECT_META },
  2: {
    name: 'spec',
    type: {
      1: { name: 'audiences', type: 'string', repeated: true },
      4: { name: 'expirationSeconds', type: 'int' },
      3: { name: 'boundObjectRef', type: { 1: { name: 'kind', type: 'string' }, 2: { name: 'apiVersion', type: 'string' }, 3: { name: 'name', type: 'string' }, 4: { name: 'uid', type: 'string' } } },
    },
  },
  3: { name: 'status', type: { 1: { name: 'token', type: 'string' }, 2: { name: 'expirationTimestamp', type: 'time' } } },
};

/** Kinds whose protobuf encoding the simulator decodes (what kubectl sends as protobuf). */
const MESSAGES: Record<string, Message> = {
  'certificates.k8s.io/v1/CertificateSigningRequest': CSR,
  'v1/Namespace': NAMESPACE,
  'v1/ConfigMap': CONFIG_MAP,
  'v1/Secret': SECRET,
  'v1/ServiceAccount': SERVICE_ACCOUNT,
  'authentication.k8s.io/v1/TokenRequest': TOKEN_REQUEST,
};

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) {
        throw badRequest('truncated protobuf varint');
      }
      const byte = this.buf[this.pos++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        return result;
      }
      shift += 7n;
    }
  }
  bytes(): Buffer {
    const length = Number(this.varint());
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }
  skip(wireType: number): void {
    if (wireType === 0) {
      this.varint();
    } else if (wireType === 1) {
      this.pos += 8;
    } else if (wireType === 2) {
      this.bytes();
    } else if (wireType === 5) {
      this.pos += 4;
    } else {
      throw badRequest(`unsupported protobuf wire type ${wireType}`);
    }
  }
}

function signed(value: bigint): number {
  return Number(BigInt.asIntN(64, value));
}

function decodeValue(type: FieldType, reader: Reader, wireType: number): JsonValue {
  if (type === 'int') {
    return signed(reader.varint());
  }
  if (type === 'bool') {
    return reader.varint() !== 0n;
  }
  const raw = reader.bytes();
  if (type === 'string') {
    return raw.toString('utf8');
  }
  if (type === 'bytes') {
    return raw.toString('base64');
  }
  if (type === 'time') {
    const seconds = Number(decodeMessage(TIME, raw)['seconds'] ?? GO_ZERO_TIME_SECONDS);
    return seconds <= GO_ZERO_TIME_SECONDS ? null : kubeTime(new Date(seconds * 1000));
  }
  if (wireType !== 2) {
    throw badRequest('unexpected protobuf wire type for a message');
  }
  return decodeMessage(type as Message, raw);
}

function decodeMessage(message: Message, buf: Buffer): JsonObject {
  const reader = new Reader(buf);
  const out: JsonObject = {};
  while (!reader.done) {
    const tag = Number(reader.varint());
    const fieldNumber = tag >> 3;
    const wireType = tag & 7;
    const field = message[fieldNumber];
    if (!field) {
      reader.skip(wireType);
      continue;
    }
    if (typeof field.type === 'object' && 'map' in field.type) {
      const entry = new Reader(reader.bytes());
      let key = '';
      let value: JsonValue = '';
      while (!entry.done) {
        const entryTag = Number(entry.varint());
        if (entryTag >> 3 === 1) {
          key = entry.bytes().toString('utf8');
        } else if (entryTag >> 3 === 2) {
          const valueType = field.type.map;
          const raw = entry.bytes();
          value = valueType === 'string' ? raw.toString('utf8') : valueType === 'bytes' ? raw.toString('base64') : decodeMessage(valueType, raw);
          if (typeof value === 'object' && value !== null && !Array.isArray(value) && 'items' in value) {
            value = value['items'];
          }
        } else {
          entry.skip(entryTag & 7);
        }
      }
      const map = (out[field.name] ?? {}) as JsonObject;
      map[key] = value;
      out[field.name] = map;
      continue;
    }
    const value = decodeValue(field.type, reader, wireType);
    if (field.repeated) {
      const list = (out[field.name] ?? []) as JsonValue[];
      list.push(value);
      out[field.name] = list;
    } else {
      out[field.name] = value;
    }
  }
  return out;
}

/**
 * Decodes a request body in Kubernetes' protobuf envelope (`k8s\0` + runtime.Unknown) into the JSON
 * object, for the kinds kubectl sends that way (`kubectl certificate approve|deny` PUTs the CSR,
 * `kubectl create namespace|configmap|secret` POST theirs). Other kinds are 415.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#protobuf-encoding
 */
export function decodeProtobufObject(body: Buffer): JsonObject {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) {
    throw badRequest('protobuf body is missing the k8s envelope');
  }
  const unknown = decodeMessage({ 1: { name: 'typeMeta', type: { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } } }, 2: { name: 'raw', type: 'bytes' } }, body.subarray(4));
  const typeMeta = (unknown['typeMeta'] ?? {}) as JsonObject;
  const apiVersion = String(typeMeta['apiVersion'] ?? '');
  const kind = String(typeMeta['kind'] ?? '');
  const message = MESSAGES[`${apiVersion}/${kind}`];
  if (!message) {
    throw unsupportedMediaType(PROTOBUF_CONTENT_TYPE, ['application/json', 'application/yaml']);
  }
  const obj = decodeMessage(message, Buffer.from(String(unknown['raw'] ?? ''), 'base64'));
  return { apiVersion, kind, ...obj };
}
