/**
 * Kubelets filing their client CSRs all at once, in a process of their own, so that their TLS
 * handshakes and requests are not counted as the approver's CPU nor wait on its event loop.
 *
 * Reads one JSON document on stdin ({ url, caPem, requests: [{ token, csrPem }] }), sends every
 * request at once, each on a connection of its own as separate kubelets would, and prints one JSON
 * line per CSR: { index, name, sentAt, createdAt } (epoch milliseconds with sub-millisecond
 * precision, comparable across processes), then { cpuMs } for the whole burst.
 */
import { Agent, request } from 'node:https';
import { performance } from 'node:perf_hooks';
import { text } from 'node:stream/consumers';

interface Burst {
  readonly url: string;
  readonly caPem: string;
  readonly requests: ReadonlyArray<{ readonly token: string; readonly csrPem: string }>;
}

const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
const epochMs = (): number => performance.timeOrigin + performance.now();

function createCsr(burst: Burst, token: string, csrPem: string): Promise<string> {
  const body = JSON.stringify({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { generateName: 'csr-' },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName: KUBELET_CLIENT_SIGNER, usages: ['digital signature', 'client auth'] },
  });
  return new Promise((resolve, reject) => {
    const sent = request(
      new URL('/apis/certificates.k8s.io/v1/certificatesigningrequests', burst.url),
      {
        method: 'POST',
        agent: new Agent({ ca: burst.caPem, keepAlive: false }),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        void text(response).then((answer) => {
          if (response.statusCode !== 201) {
            reject(new Error(`create csr: HTTP ${response.statusCode}: ${answer.slice(0, 200)}`));
            return;
          }
          resolve((JSON.parse(answer) as { metadata: { name: string } }).metadata.name);
        }, reject);
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

const burst = JSON.parse(await text(process.stdin)) as Burst;
const cpuBefore = process.cpuUsage();
await Promise.all(
  burst.requests.map(async ({ token, csrPem }, index) => {
    const sentAt = epochMs();
    const name = await createCsr(burst, token, csrPem);
    process.stdout.write(`${JSON.stringify({ index, name, sentAt, createdAt: epochMs() })}\n`);
  }),
);
const cpu = process.cpuUsage(cpuBefore);
process.stdout.write(`${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
