import { badRequest, unsupportedMediaType } from './api-error';
import type { JsonObject, JsonValue } from './json-value';
import { PROTOBUF_KINDS, PROTOBUF_MESSAGES, type ProtoField } from './protobuf-schema';

/** Media type of Kubernetes' protobuf encoding. */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
/** Unix seconds of Go's zero time.Time, what an unset metav1.Time encodes as. */
const GO_ZERO_TIME_SECONDS = -62135596800;
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const FLAG_REPEATED = 1;
const FLAG_KEEP_ZERO = 2;
const FLAG_INLINE = 4;
const SCALARS = new Set(['int', 'bool', 'double']);

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
    if (this.pos + length > this.buf.length) {
      throw badRequest('truncated protobuf field');
    }
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }
  fixed(size: 4 | 8): Buffer {
    const out = this.buf.subarray(this.pos, this.pos + size);
    this.pos += size;
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

/** Fields of a small message by number: `{1: ..., 2: ...}` with raw values. */
function rawFields(buf: Buffer): Map<number, { wireType: number; value: bigint | Buffer }> {
  const reader = new Reader(buf);
  const out = new Map<number, { wireType: number; value: bigint | Buffer }>();
  while (!reader.done) {
    const tag = Number(reader.varint());
    const wireType = tag & 7;
    if (wireType === 0) {
      out.set(tag >> 3, { wireType, value: reader.varint() });
    } else if (wireType === 2) {
      out.set(tag >> 3, { wireType, value: reader.bytes() });
    } else {
      reader.skip(wireType);
    }
  }
  return out;
}

function int(fields: ReturnType<typeof rawFields>, n: number): number {
  const value = fields.get(n)?.value;
  return typeof value === 'bigint' ? Number(BigInt.asIntN(64, value)) : 0;
}

function text(fields: ReturnType<typeof rawFields>, n: number): string {
  const value = fields.get(n)?.value;
  return Buffer.isBuffer(value) ? value.toString('utf8') : '';
}

/** metav1.Time (seconds precision) or metav1.MicroTime (microseconds) from a Timestamp message. */
function timestamp(buf: Buffer, micro: boolean): JsonValue {
  const fields = rawFields(buf);
  const seconds = fields.has(1) ? int(fields, 1) : GO_ZERO_TIME_SECONDS;
  if (seconds <= GO_ZERO_TIME_SECONDS) {
    return null;
  }
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (!micro) {
    return `${iso}Z`;
  }
  const micros = Math.floor(int(fields, 2) / 1000);
  return `${iso}.${String(micros).padStart(6, '0')}Z`;
}

function decodeSpecial(type: string, raw: Buffer): JsonValue {
  switch (type) {
    case 'time':
      return timestamp(raw, false);
    case 'microtime':
      return timestamp(raw, true);
    case 'duration':
    case 'quantity':
      return text(rawFields(raw), 1);
    case 'intorstring': {
      const fields = rawFields(raw);
      return int(fields, 1) === 1 ? text(fields, 3) : int(fields, 2);
    }
    case 'raw': {
      const body = rawFields(raw).get(1)?.value;
      if (!Buffer.isBuffer(body) || body.length === 0) {
        return null;
      }
      try {
        return JSON.parse(body.toString('utf8')) as JsonValue;
      } catch {
        return body.toString('base64');
      }
    }
    default:
      throw badRequest(`unknown protobuf field type ${type}`);
  }
}

function decodeScalar(type: string, reader: Reader, wireType: number): JsonValue {
  if (type === 'double') {
    return wireType === 1 ? reader.fixed(8).readDoubleLE(0) : reader.fixed(4).readFloatLE(0);
  }
  const value = reader.varint();
  return type === 'bool' ? value !== 0n : Number(BigInt.asIntN(64, value));
}

/** Decodes one value of a (non-repeated-scalar) field whose payload is length-delimited or a varint. */
function decodeValue(type: string, reader: Reader, wireType: number): JsonValue {
  if (SCALARS.has(type)) {
    return decodeScalar(type, reader, wireType);
  }
  if (wireType !== 2) {
    throw badRequest(`unexpected protobuf wire type ${wireType} for a ${type} field`);
  }
  const raw = reader.bytes();
  if (type === 'string') {
    return raw.toString('utf8');
  }
  if (type === 'bytes') {
    return raw.toString('base64');
  }
  if (type.startsWith('wrapped:')) {
    const items = decodeMessage(type.slice(8), raw)['items'];
    return Array.isArray(items) ? items : [];
  }
  if (PROTOBUF_MESSAGES[type] !== undefined) {
    return decodeMessage(type, raw);
  }
  return decodeSpecial(type, raw);
}

function isZero(value: JsonValue): boolean {
  return value === '' || value === 0 || value === false;
}

/**
 * Decodes a message of the generated schema into the JSON the real server would have read: JSON
 * field names, inlined structs merged, Go zero values of omitempty fields dropped.
 */
function decodeMessage(key: string, buf: Buffer): JsonObject {
  const fields = PROTOBUF_MESSAGES[key];
  if (!fields) {
    throw badRequest(`no protobuf schema for ${key}`);
  }
  const byNumber = new Map<number, ProtoField>(fields.map((f) => [f[0], f]));
  const reader = new Reader(buf);
  const out: JsonObject = {};
  while (!reader.done) {
    const tag = Number(reader.varint());
    const field = byNumber.get(tag >> 3);
    const wireType = tag & 7;
    if (!field) {
      reader.skip(wireType);
      continue;
    }
    const [, name, type, flags] = field;
    if (type.startsWith('map:')) {
      const entry = new Reader(reader.bytes());
      let mapKey = '';
      let value: JsonValue = null;
      while (!entry.done) {
        const entryTag = Number(entry.varint());
        if (entryTag >> 3 === 1) {
          mapKey = entry.bytes().toString('utf8');
        } else if (entryTag >> 3 === 2) {
          value = decodeValue(type.slice(4), entry, entryTag & 7);
        } else {
          entry.skip(entryTag & 7);
        }
      }
      const map = (out[name] ?? {}) as JsonObject;
      map[mapKey] = value ?? (type === 'map:string' || type === 'map:bytes' ? '' : null);
      out[name] = map;
      continue;
    }
    if (flags & FLAG_INLINE) {
      Object.assign(out, decodeValue(type, reader, wireType) as JsonObject);
      continue;
    }
    if (flags & FLAG_REPEATED) {
      const list = (out[name] ?? []) as JsonValue[];
      if (SCALARS.has(type) && wireType === 2) {
        const packed = new Reader(reader.bytes());
        while (!packed.done) {
          list.push(decodeScalar(type, packed, type === 'double' ? 1 : 0));
        }
      } else {
        list.push(decodeValue(type, reader, wireType));
      }
      out[name] = list;
      continue;
    }
    const value = decodeValue(type, reader, wireType);
    if ((flags & FLAG_KEEP_ZERO) === 0 && isZero(value)) {
      continue;
    }
    out[name] = value;
  }
  return out;
}

/**
 * Decodes a request body in Kubernetes' protobuf envelope (`k8s\0` + runtime.Unknown) into the JSON
 * object, for every kind kube-sim serves and for DeleteOptions (what client-go sends as protobuf:
 * `kubectl drain --disable-eviction`'s deletes, `kubectl auth can-i`'s reviews, `kubectl create`'s
 * objects). A kind without a schema is 415, as an unknown type would be.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#protobuf-encoding
 */
export function decodeProtobufObject(body: Buffer): JsonObject {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) {
    throw badRequest('protobuf body is missing the k8s envelope');
  }
  const unknown = rawFields(body.subarray(4));
  const typeMeta = rawFields(Buffer.isBuffer(unknown.get(1)?.value) ? (unknown.get(1)?.value as Buffer) : Buffer.alloc(0));
  const apiVersion = text(typeMeta, 1);
  const kind = text(typeMeta, 2);
  const message = PROTOBUF_KINDS[kind === 'DeleteOptions' ? kind : `${apiVersion}/${kind}`];
  if (!message) {
    throw unsupportedMediaType(PROTOBUF_CONTENT_TYPE, ['application/json', 'application/yaml']);
  }
  const raw = unknown.get(2)?.value;
  const obj = decodeMessage(message, Buffer.isBuffer(raw) ? raw : Buffer.alloc(0));
  return { apiVersion, kind, ...obj };
}
