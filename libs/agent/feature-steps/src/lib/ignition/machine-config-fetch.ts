import {
  Backoff, DOWNLOAD_BACKOFF, HttpError, headText, isTlsErrorCode, readBody, type JsonObject,
} from '@ccos/agent/util-host';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import { scrubSecrets } from '@ccos/shared/util-redaction';
import { statePaths } from '../host-paths';
import type { StepContext, StepFailure } from '../step-handler';
import { failure, progressOf } from '../step-handler';
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
export function notIgnitionReason(status: number, contentType: string | null, body: Buffer): { reason: string; coded?: Message; document?: unknown; version?: string } {
  const not = (text: CodedText) => ({ reason: text.message, coded: bare(text) });
  if (status !== 200) {
    return not(message('agent.mcs.reason.status', { status }));
  }
  if (!isJsonType(contentType)) {
    return not(message('agent.mcs.reason.contentType', { contentType: String(contentType) }));
  }
  let document: unknown;
  try {
    document = JSON.parse(body.toString('utf8'));
  } catch {
    return not(message('agent.mcs.reason.notJson'));
  }
  const version = ignitionVersion(document);
  if (version === null) {
    return not(message('agent.mcs.reason.noVersion'));
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
      const said = `${(error as Error).message} (${code})`;
      if (ctx.signal.aborted) {
        throw error;
      }
      if (isTlsErrorCode(code)) {
        const fetchStatus = await record({ status: null, contentType: null, bytes: null, bodyHead: null, error: said, attempts: attempt });
        return failure(
          'MCS_TLS_VERIFY_FAILED',
          message('agent.mcs.tlsRefused', { url, error: said, systemCas: caSource === 'system' }),
          message(caSource === 'system' ? 'agent.mcs.tlsSystem.hint' : 'agent.mcs.tlsCa.hint'),
          { detail: { fetch: fetchStatus as unknown as JsonObject } },
        );
      }
      if (ctx.clock.monotonic() >= deadline) {
        const fetchStatus = await record({ status: null, contentType: null, bytes: null, bodyHead: null, error: said, attempts: attempt });
        return failure(
          'MCS_UNREACHABLE',
          message('agent.mcs.unreachable', { url, minutes: NETWORK_RETRY_MS / 60_000, error: said }),
          message('agent.mcs.unreachable.hint', { vip, host }),
          { detail: { fetch: fetchStatus as unknown as JsonObject } },
        );
      }
      const delay = backoff.next();
      await ctx.progress({ ...progressOf(message('agent.mcs.retrying', { error: said, seconds: (delay / 1000).toFixed(0) })), progress: 5 });
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
      await ctx.progress({ ...progressOf(message('agent.mcs.busy', { status, seconds: (delay / 1000).toFixed(0), retry: statusRetries, max: MAX_STATUS_RETRIES })), progress: 5 });
      await ctx.clock.sleep(delay, ctx.signal);
      continue;
    }
    const fetchStatus = await record({ status, contentType, bytes: body.length, bodyHead, error: verdict.reason, attempts: attempt });
    const preview = bodyHead.replace(/\s+/g, ' ').trim();
    const code = status === 406 ? 'MCS_NOT_ACCEPTABLE' : status === 200 || /html/i.test(contentType ?? '') ? 'IGNITION_NOT_IGNITION' : 'MCS_HTTP_ERROR';
    return failure(
      code,
      message('agent.mcs.notIgnition', {
        url, reason: verdict.coded ?? verdict.reason, status, contentType: contentType ?? bare(message('agent.mcs.noContentType')), bytes: String(body.length), preview: JSON.stringify(preview),
      }),
      code === 'MCS_NOT_ACCEPTABLE' ? message('agent.mcs.notAcceptable.hint', { accept: IGNITION_ACCEPT }) : message('agent.mcs.notIgnition.hint', { vip, accept: IGNITION_ACCEPT, url }),
      { detail: { fetch: fetchStatus as unknown as JsonObject, url, status, contentType, bodyHead } },
    );
  }
}
