import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from './protobuf';
import { rawRequest } from './testing/kube-clients';

/** A minimal protobuf writer, enough to build what client-go sends. */
function varint(n: number | bigint): Buffer {
  let value = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let byte = Number(value & 0x7fn);
    value >>= 7n;
    if (value > 0n) {
      byte |= 0x80;
    }
    out.push(byte);
  } while (value > 0n);
  return Buffer.from(out);
}
const field = (n: number, payload: Buffer | string): Buffer => {
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return Buffer.concat([varint((n << 3) | 2), varint(bytes.length), bytes]);
};
const int = (n: number, value: number): Buffer => Buffer.concat([varint(n << 3), varint(value)]);
const message = (...parts: Buffer[]): Buffer => Buffer.concat(parts);
/** `k8s\0` + runtime.Unknown{typeMeta, raw}. */
const envelope = (apiVersion: string, kind: string, raw: Buffer): Buffer =>
  Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), field(1, message(field(1, apiVersion), field(2, kind))), field(2, raw)]);

describe('protobuf request bodies', () => {
  let sim: KubeSim;

  beforeAll(async () => {
    sim = await startKubeSim({ seed: 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n' });
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('decodes a Pod with inlined volume sources, kept pointer zeros and dropped empty values', () => {
    const meta = message(field(1, 'p'), field(3, ''), field(11, message(field(1, 'app'), field(2, 'web'))));
    const volume = message(field(1, 'scratch'), field(2, message(field(2, message()))));
    const container = message(field(1, 'c'), field(2, 'busybox'));
    const spec = message(field(1, volume), field(2, container), int(4, 0), field(10, 'n1'), int(11, 0));
    const pod = decodeProtobufObject(envelope('v1', 'Pod', message(field(1, meta), field(2, spec))));
    expect(pod).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', labels: { app: 'web' } },
      spec: { volumes: [{ name: 'scratch', emptyDir: {} }], containers: [{ name: 'c', image: 'busybox' }], terminationGracePeriodSeconds: 0, nodeName: 'n1' },
    });
  });

  it('creates a Pod and deletes it with protobuf DeleteOptions (what kubectl drain --disable-eviction sends)', async () => {
    const body = envelope('v1', 'Pod', message(field(1, message(field(1, 'proto-pod'))), field(2, message(field(2, message(field(1, 'c'), field(2, 'busybox'))), field(10, 'n1')))));
    const created = await rawRequest(sim, { method: 'POST', path: '/api/v1/namespaces/default/pods', headers: { 'Content-Type': PROTOBUF_CONTENT_TYPE }, body });
    expect(created.status, created.body).toBe(201);
    const uid = (JSON.parse(created.body) as { metadata: { uid: string } }).metadata.uid;
    const options = envelope('v1', 'DeleteOptions', message(int(1, 0), field(2, message(field(1, uid))), field(4, 'Background')));
    const deleted = await rawRequest(sim, { method: 'DELETE', path: '/api/v1/namespaces/default/pods/proto-pod', headers: { 'Content-Type': PROTOBUF_CONTENT_TYPE }, body: options });
    expect(deleted.status, deleted.body).toBe(200);
    expect(sim.store.get(sim.resource('pods'), 'default', 'proto-pod')).toBeUndefined();
    const conflicting = envelope('v1', 'DeleteOptions', field(2, message(field(1, 'another-uid'))));
    const refused = await rawRequest(sim, { method: 'DELETE', path: '/api/v1/nodes/n1', headers: { 'Content-Type': PROTOBUF_CONTENT_TYPE }, body: conflicting });
    expect(JSON.parse(refused.body)).toMatchObject({ code: 409, message: expect.stringContaining('Precondition failed: UID in precondition: another-uid') });
  });

  it('is 415 for kinds it has no schema of', async () => {
    const res = await rawRequest(sim, { method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: { 'Content-Type': PROTOBUF_CONTENT_TYPE }, body: envelope('example.com/v1', 'Widget', message()) });
    expect(res.status).toBe(415);
  });
});
