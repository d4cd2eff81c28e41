import type { IncomingMessage, ServerResponse } from 'node:http';
import { expired } from './api-error';
import type { KubeObject } from './kube-object';
import type { ResourceDefinition } from './resource-definition';
import { apiVersionOf } from './resource-definition';
import type { FieldSelector, LabelSelector } from './selectors';
import type { ChangeType, ObjectStore, StoreEvent } from './store';

/** Default watch duration when the client gives no timeoutSeconds (the server's --min-request-timeout). */
export const DEFAULT_WATCH_TIMEOUT_SECONDS = 1800;

/** What one watch request asks for. */
export interface WatchRequest {
  def: ResourceDefinition;
  namespace?: string;
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  resourceVersion?: string;
  timeoutSeconds?: number;
  allowBookmarks: boolean;
  sendInitialEvents?: boolean;
  /** Serializes an event's object (plain JSON, or a one-row Table). */
  encode(obj: KubeObject, rv: number, cachedJson?: string): string;
  contentType: string;
}

/** An open watch stream, closed by the client, its timeout or the server's shutdown. */
export interface WatchHandle {
  close(): void;
}

function line(type: ChangeType | 'BOOKMARK' | 'ERROR', objectJson: string): string {
  return `{"type":"${type}","object":${objectJson}}\n`;
}

/**
 * Streams watch events as newline-delimited JSON over a chunked 200 response, like the API server's
 * watch cache: initial ADDED events when no resourceVersion (or "0") is given, otherwise the
 * events after it, or a single ERROR event with a 410 Expired Status when history no longer reaches
 * back that far. Label/field selectors turn objects entering or leaving the selection into
 * ADDED/DELETED. BOOKMARKs when asked for; the stream ends after timeoutSeconds.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes
 */
export function serveWatch(store: ObjectStore, req: IncomingMessage, res: ServerResponse, watch: WatchRequest, bookmarkIntervalMs: number, onClose: () => void): WatchHandle {
  const { def } = watch;
  let closed = false;
  let unsubscribe: () => void = () => undefined;
  const timers: NodeJS.Timeout[] = [];
  const close = (): void => {
    if (closed) {
      return;
    }
    closed = true;
    unsubscribe();
    timers.forEach(clearTimeout);
    timers.forEach(clearInterval);
    if (!res.writableEnded) {
      res.end();
    }
    onClose();
  };
  res.writeHead(200, { 'Content-Type': watch.contentType, 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  req.on('close', close);
  res.on('close', close);

  const inScope = (obj: KubeObject | undefined): boolean =>
    obj !== undefined &&
    (!def.namespaced || !watch.namespace || obj.metadata.namespace === watch.namespace) &&
    watch.labelSelector.matches(obj.metadata.labels) &&
    watch.fieldSelector.matches(obj);

  const send = (type: ChangeType, obj: KubeObject, rv: number, json?: string): void => {
    if (!closed) {
      res.write(line(type, watch.encode(obj, rv, json)));
    }
  };

  const deliver = (event: StoreEvent): void => {
    if (event.resource !== def) {
      return;
    }
    const now = inScope(event.object);
    const before = event.type === 'ADDED' ? false : inScope(event.previous);
    if (event.type === 'DELETED') {
      if (before) {
        send('DELETED', event.object, event.rv, (event.json ??= JSON.stringify(event.object)));
      }
    } else if (now && (before || event.type === 'ADDED')) {
      send(event.type, event.object, event.rv, (event.json ??= JSON.stringify(event.object)));
    } else if (now && !before) {
      send('ADDED', event.object, event.rv, (event.json ??= JSON.stringify(event.object)));
    } else if (!now && before && event.previous) {
      send('DELETED', { ...event.previous, metadata: { ...event.previous.metadata, resourceVersion: String(event.rv) } }, event.rv);
    }
  };

  const rvParam = watch.resourceVersion;
  const fromState = rvParam === undefined || rvParam === '' || rvParam === '0' || watch.sendInitialEvents === true;
  if (fromState) {
    const currentRv = store.resourceVersion;
    const nodeName = def.group === '' && def.resource === 'pods' ? watch.fieldSelector.equalityValue('spec.nodeName') : undefined;
    for (const obj of store.list(def, { namespace: watch.namespace, nodeName })) {
      if (inScope(obj)) {
        send('ADDED', obj, Number(obj.metadata.resourceVersion), store.json(def, obj));
      }
    }
    if (watch.sendInitialEvents === true && watch.allowBookmarks) {
      res.write(line('BOOKMARK', bookmarkJson(def, currentRv, true)));
    }
  } else {
    const from = Number(rvParam);
    const backlog = Number.isInteger(from) && from >= 0 ? store.eventsSince(def, from) : undefined;
    if (!backlog) {
      const status = expired(`too old resource version: ${rvParam} (${store.oldestWatchable(def)})`).status;
      res.write(line('ERROR', JSON.stringify(status)));
      close();
      return { close };
    }
    backlog.forEach(deliver);
  }
  unsubscribe = store.subscribe(deliver);
  const timeoutMs = (watch.timeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS) * 1000;
  timers.push(setTimeout(close, timeoutMs));
  if (watch.allowBookmarks) {
    timers.push(setInterval(() => !closed && res.write(line('BOOKMARK', bookmarkJson(def, store.resourceVersion, false))), bookmarkIntervalMs));
  }
  return { close };
}

function bookmarkJson(def: ResourceDefinition, rv: number, initialEventsEnd: boolean): string {
  const metadata: Record<string, unknown> = { resourceVersion: String(rv), creationTimestamp: null };
  if (initialEventsEnd) {
    metadata['annotations'] = { 'k8s.io/initial-events-end': 'true' };
  }
  return JSON.stringify({ kind: def.kind, apiVersion: apiVersionOf(def), metadata });
}
