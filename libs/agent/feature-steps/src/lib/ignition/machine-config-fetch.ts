import {
  Backoff, DOWNLOAD_BACKOFF, HttpError, headText, isTlsErrorCode, readBody, type JsonObject,
} from '@ccos/agent/util-host';
import { scrubSecrets } from '@ccos/shared/util-redaction';
import { statePaths } from '../host-paths';
import type { StepContext, StepFailure } from '../step-handler';
import { failure } from '../step-handler';
import { ignitionVersion } from './ignition-config';

export const IGNITION_ACCEPT = 'application/vnd.coreos.ignition+json;version=3.2.0';
/** How much of a non-Ignition answer is reported. */
export const BODY_HEAD_BYTES = 512;
/** How much of an answer is scrubbed before its head is cut, so a token the cut would split is still recognised whole. */
const SCRUB_WINDOW_BYTES = 64 * 1024;

/**
 * The first {@link BODY_HEAD_BYTES} of an answer as reported in events and kept for the diagnostics
 * bundle, with tokens, private keys and embedded file contents removed: a worker Ignition config
 * answered where it was not expected holds the node bootstrap credential.
 */
export function bodyExcerpt(body: Uint8Array): string {
  return headText(Buffer.from(scrubSecrets(headText(body, SCRUB_WINDOW_BYTES)), 'utf8'), BODY_HEAD_BYTES);
}

/** What the fetch saw, kept in the state folder for the diagnostics bundle. */
export interface FetchStatus {
  readonly url: string;
  readonly caSource: 'machineConfigCaCert' | 'system';
  readonly status: number | null;
  readonly contentType: string | null;
  readonly bytes: number | null;
  readonly bodyHead: string | null;
  readonly error: string | null;
  readonly attempts: number;
  readonly at: string;
}

export interface FetchedConfig {
  readonly document: unknown;
  readonly version: string;
  readonly status: FetchStatus;
}

/** Media types a machine config server answers Ignition with. */
function isJsonType(contentType: string | null): boolean {
  if (contentType === null || contentType === '') {
    return true;
  }
  const base = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return base === 'application/json' || base === 'application/vnd.coreos.ignition+json' || base.endsWith('+json');
}

/** Why an answer is not an Ignition config, or null when it is one. */
export function notIgnitionReason(status: number, contentType: string | null, body: Buffer): { reason: string; document?: unknown; version?: string } {
  if (status !== 200) {
    return { reason: `HTTP ${status}` };
  }
  if (!isJsonType(contentType)) {
    return { reason: `content type ${contentType}` };
  }
  let document: unknown;
  try {
    document = JSON.parse(body.toString('utf8'));
  } catch {
    return { reason: 'the body is not JSON' };
  }
  const version = ignitionVersion(document);
  if (version === null) {
    return { reason: 'the JSON has no ignition.version 3.x' };
  }
  return { reason: '', document, version };
}

const TRANSIENT_STATUS = new Set([429, 500, 502, 503, 504]);
const MAX_STATUS_RETRIES = 5;
const NETWORK_RETRY_MS = 2 * 60_000;

/**
 * GETs the worker config from the machine config server through the VIP,
 * verified with the cluster's MCS CA. Network errors are retried for two
 * minutes and busy answers (429/5xx) five times; anything that is not an
 * Ignition spec 3 config fails with its status, content type and first 512
 * bytes, which is how a load balancer's error page shows up.
 */
export async function fetchWorkerConfig(ctx: StepContext): Promise<FetchedConfig | StepFailure> {
  const { vip, machineConfigCaCert, stateDir } = ctx.config;
  const host = vip.includes(':') ? `[${vip}]` : vip;
  const url = `https://${host}:22623/config/worker`;
  const caSource = machineConfigCaCert === null ? 'system' : 'machineConfigCaCert';
  const backoff = new Backoff(DOWNLOAD_BACKOFF);
  const deadline = ctx.clock.monotonic() + NETWORK_RETRY_MS;
  let statusRetries = 0;
  const record = async (status: Omit<FetchStatus, 'url' | 'caSource' | 'at'>): Promise<FetchStatus> => {
    const full: FetchStatus = { url, caSource, ...status, at: new Date(ctx.clock.now()).toISOString() };
    await ctx.fs.writeFileAtomic(statePaths(stateDir).ignitionFetch, `${JSON.stringify(full, null, 2)}\n`, { mode: 0o600 }).catch(() => undefined);
    return full;
  };
  for (let attempt = 1; ; attempt += 1) {
    let status: number;
    let contentType: string | null;
    let body: Buffer;
    try {
      const response = await ctx.http.request({
        method: 'GET',
        url,
        headers: { accept: IGNITION_ACCEPT },
        ...(machineConfigCaCert === null ? {} : { ca: machineConfigCaCert }),
        timeoutMs: 30_000,
        idleTimeoutMs: 15_000,
        signal: ctx.signal,
      });
      status = response.status;
      contentType = response.headers['content-type'] ?? null;
      body = await readBody(response, 32 * 1024 * 1024);
    } catch (error) {
      const code = error instanceof HttpError ? error.code : 'EREQUEST';
      const message = `${(error as Error).message} (${code})`;
      if (ctx.signal.aborted) {
        throw error;
      }
      if (isTlsErrorCode(code)) {
        const fetchStatus = await record({ status: null, contentType: null, bytes: null, bodyHead: null, error: message, attempts: attempt });
        return failure(
          'MCS_TLS_VERIFY_FAILED',
          `the machine config server's certificate at ${url} was not accepted: ${message}${caSource === 'system' ? ' (verified with the system CAs: the config has no machineConfigCaCert)' : ''}`,
          caSource === 'system'
            ? 'Register the cluster with the machine config server\'s CA (the root CA of the cluster, as in the pointer Ignition\'s ignition.security.tls.certificateAuthorities) so the agent gets machineConfigCaCert.'
            : 'machineConfigCaCert does not verify the server at the VIP: check the CA registered for the cluster and that the certificate names the VIP.',
          { detail: { fetch: fetchStatus as unknown as JsonObject } },
        );
      }
      if (ctx.clock.monotonic() >= deadline) {
        const fetchStatus = await record({ status: null, contentType: null, bytes: null, bodyHead: null, error: message, attempts: attempt });
        return failure(
          'MCS_UNREACHABLE',
          `the machine config server at ${url} did not answer for ${NETWORK_RETRY_MS / 60_000} min: ${message}`,
          `Check the load balancer and firewall for ${vip}:22623 (\`curl -k https://${host}:22623/healthz\` from the host).`,
          { detail: { fetch: fetchStatus as unknown as JsonObject } },
        );
      }
      const delay = backoff.next();
      await ctx.progress({ message: `machine config server not reachable (${message}); retrying in ${(delay / 1000).toFixed(0)} s`, progress: 5 });
      await ctx.clock.sleep(delay, ctx.signal);
      continue;
    }
    const verdict = notIgnitionReason(status, contentType, body);
    const bodyHead = bodyExcerpt(body);
    if (verdict.reason === '') {
      const fetchStatus = await record({ status, contentType, bytes: body.length, bodyHead: verdict.version === undefined ? bodyHead : null, error: null, attempts: attempt });
      return { document: verdict.document, version: verdict.version as string, status: fetchStatus };
    }
    if (TRANSIENT_STATUS.has(status) && statusRetries < MAX_STATUS_RETRIES) {
      statusRetries += 1;
      const delay = backoff.next();
      await ctx.progress({ message: `machine config server answered HTTP ${status}; retrying in ${(delay / 1000).toFixed(0)} s (${statusRetries}/${MAX_STATUS_RETRIES})`, progress: 5 });
      await ctx.clock.sleep(delay, ctx.signal);
      continue;
    }
    const fetchStatus = await record({ status, contentType, bytes: body.length, bodyHead, error: verdict.reason, attempts: attempt });
    const preview = bodyHead.replace(/\s+/g, ' ').trim();
    const code = status === 406 ? 'MCS_NOT_ACCEPTABLE' : status === 200 || /html/i.test(contentType ?? '') ? 'IGNITION_NOT_IGNITION' : 'MCS_HTTP_ERROR';
    return failure(
      code,
      `${url} did not return an Ignition config (${verdict.reason}): HTTP ${status}, Content-Type ${contentType ?? '(none)'}, ${body.length} bytes, starting ${JSON.stringify(preview)}`,
      code === 'MCS_NOT_ACCEPTABLE'
        ? `The server refuses the requested Ignition version (Accept: ${IGNITION_ACCEPT}); the cluster's machine config server must serve spec 3.`
        : `This answer does not come from the machine config server — usually a load balancer's error page or a wrong backend on ${vip}:22623. Check with \`curl -k -H 'Accept: ${IGNITION_ACCEPT}' ${url}\` from the host, then fix the load balancer.`,
      { detail: { fetch: fetchStatus as unknown as JsonObject, url, status, contentType, bodyHead } },
    );
  }
}
