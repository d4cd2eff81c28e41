import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import {
  ApiError,
  badRequest,
  expired,
  failureStatus,
  internalError,
  invalid,
  methodNotAllowed,
  resourceNotFound,
  tooLargeResourceVersion,
  unauthorized,
  unsupportedMediaType,
  type FieldError,
} from './api-error';
import type { Authenticator } from './auth';
import { ACCESS_REVIEW_KINDS, answerAccessReview } from './authorization/access-reviews';
import type { Authorizer } from './authorization/authorizer';
import { impersonate } from './authorization/impersonation';
import { requestAttributes } from './authorization/request-info';
import { negotiate } from './content-negotiation';
import { aggregatedDiscovery, AGGREGATED_DISCOVERY_TYPE, apiGroup, coreVersions, groupList, resourceList, versionInfo } from './discovery';
import { evictPod } from './eviction';
import { isJsonObject, type JsonObject, type JsonValue } from './json-value';
import { kubeTime, type KubeObject } from './kube-object';
import type { DeleteOptions, ObjectApi } from './object-api';
import { subjectOf } from './object-api';
import { openApiGroupVersion, openApiRoot } from './openapi';
import { PATCH_CONTENT_TYPES, type PatchType } from './patch';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from './protobuf';
import { apiVersionOf, type ResourceDefinition } from './resource-definition';
import { parseFieldSelector, parseLabelSelector } from './selectors';
import { partialObjectMetadata, toTable, type IncludeObject } from './table';
import type { UserInfo } from './user-info';
import { serveWatch, type WatchHandle } from './watch';

const MAX_BODY_BYTES = 3 * 1024 * 1024;
const PUBLIC_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz']);

export interface ApiHandlerOptions {
  api: ObjectApi;
  authenticator: Authenticator;
  authorizer: Authorizer;
  /** Whether requests without credentials are served (as `anonymousUser`) instead of 401. */
  allowAnonymous: boolean;
  /** Who a request without credentials is: system:anonymous, or the old insecure port's system:unsecured. */
  anonymousUser: UserInfo;
  /** host:port reported in /api serverAddressByClientCIDRs. */
  serverAddress: () => string;
  /** Answer kubectl's aggregated discovery requests (apidiscovery.k8s.io/v2); legacy documents otherwise. */
  aggregatedDiscovery: boolean;
  bookmarkIntervalMs: number;
  /** How long a list or watch at a resourceVersion the store has not reached yet waits for it (504 after). */
  tooLargeResourceVersionWaitMs: number;
  /** The server's --min-request-timeout: a watch without timeoutSeconds lasts this × rand[1, 2) seconds. */
  minRequestTimeoutSeconds: number;
  /** Answers `serviceaccounts/<name>/token` (TokenRequest). */
  tokenRequests?: { request(namespace: string, name: string, body: JsonValue | undefined): JsonObject };
  /** Called once per finished request (method, path, status, user). */
  log?: (line: string) => void;
}

/** A parsed resource path. */
interface ResourcePath {
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
}

function parseResourcePath(parts: string[]): { group: string; version: string; rest: string[] } | undefined {
  if (parts[0] === 'api' && parts.length >= 2) {
    return { group: '', version: parts[1], rest: parts.slice(2) };
  }
  if (parts[0] === 'apis' && parts.length >= 3) {
    return { group: parts[1], version: parts[2], rest: parts.slice(3) };
  }
  return undefined;
}

function toResourcePath(group: string, version: string, rest: string[]): ResourcePath | undefined {
  if (rest.length === 0) {
    return undefined;
  }
  if (rest[0] === 'namespaces' && group === '' && (rest.length === 2 || (rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize')))) {
    return { group, version, resource: 'namespaces', name: rest[1], subresource: rest[2] };
  }
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    return rest.length > 5 ? undefined : { group, version, namespace: rest[1], resource: rest[2], name: rest[3], subresource: rest[4] };
  }
  return rest.length > 3 ? undefined : { group, version, resource: rest[0], name: rest[1], subresource: rest[2] };
}

function parseBool(value: string | null): boolean {
  return value !== null && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);
}

function optionalInt(value: string | null, name: string): number | undefined {
  if (value === null || value === '') {
    return undefined;
  }
  if (!/^-?\d+$/.test(value)) {
    throw badRequest(`invalid value for ${name}: ${value}`);
  }
  return Number(value);
}

function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString('base64');
}

/** A continue token: the resourceVersion of the list's first page (-1: continue at the latest) and the key to start after. */
function decodeContinue(token: string): { rv: number; afterKey: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { v?: string; rv?: number; start?: string };
    if (parsed.v !== 'meta.k8s.io/v1' || typeof parsed.start !== 'string' || typeof parsed.rv !== 'number' || parsed.rv === 0) {
      throw new Error('bad');
    }
    return { rv: parsed.rv, afterKey: parsed.start.endsWith('\u0000') ? parsed.start.slice(0, -1) : parsed.start };
  } catch {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
}

const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function mediaType(header: string | undefined): string {
  return (header ?? 'application/json').split(';')[0].trim().toLowerCase();
}

/**
 * The HTTP face of the simulator: authentication, discovery, and the REST verbs of every served
 * resource (get, list with selectors and pagination, watch, create, update, patch, delete,
 * deletecollection, status/approval subresources, pods/eviction) with Status errors.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/
 */
export class ApiHandler {
  private readonly watches = new Set<WatchHandle>();

  constructor(private readonly options: ApiHandlerOptions) {}

  /** Request listener for node:http / node:https. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader('Audit-Id', randomUUID());
    res.setHeader('Cache-Control', 'no-cache, private');
    let who = '-';
    if (this.options.log) {
      const log = this.options.log;
      res.on('finish', () => log(`${req.method ?? ''} ${req.url ?? ''} ${res.statusCode} ${who}`));
    }
    this.route(req, res, (user) => {
      who = user.username;
    })
      .catch((error: unknown) => {
        const apiError = error instanceof ApiError ? error : internalError(error instanceof Error ? error.message : String(error));
        if (!(error instanceof ApiError)) {
          this.options.log?.(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        }
        if (!res.headersSent) {
          this.sendJson(res, apiError.status.code, apiError.status);
        } else if (!res.writableEnded) {
          res.end();
        }
      });
  };

  /** Ends every open watch (shutdown). */
  closeWatches(): void {
    for (const watch of [...this.watches]) {
      watch.close();
    }
  }

  private sendJson(res: ServerResponse, code: number, body: JsonValue | string, contentType = 'application/json'): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  private async readBody(req: IncomingMessage): Promise<JsonValue | undefined> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > MAX_BODY_BYTES) {
        throw new ApiError(failureStatus(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728'));
      }
      chunks.push(buf);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') {
      return undefined;
    }
    const type = mediaType(req.headers['content-type']);
    if (type === PROTOBUF_CONTENT_TYPE) {
      return decodeProtobufObject(Buffer.concat(chunks));
    }
    try {
      return (type === 'application/yaml' ? parseYaml(text) : JSON.parse(text)) as JsonValue;
    } catch (error) {
      throw badRequest(`error decoding request body: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private authenticate(req: IncomingMessage, path: string): UserInfo {
    const result = this.options.authenticator.authenticate(req);
    if (result.kind === 'user') {
      return result.user;
    }
    if (result.kind === 'anonymous' && (this.options.allowAnonymous || PUBLIC_PATHS.has(path))) {
      return this.options.anonymousUser;
    }
    throw unauthorized();
  }

  private async route(req: IncomingMessage, res: ServerResponse, identified: (user: UserInfo) => void): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://kube-sim');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const user = impersonate(this.authenticate(req, path), req.headers, this.options.authorizer);
    identified(user);
    this.options.authorizer.check(requestAttributes(user, method, path, url.searchParams));
    if (PUBLIC_PATHS.has(path) && path !== '/version') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    }
    if (path === '/version') {
      this.sendJson(res, 200, versionInfo());
      return;
    }
    const parts = path.split('/').filter(Boolean);
    const defs = this.options.api.store.definitions;
    if (method === 'GET' && (path === '/api' || path === '/apis')) {
      const representation = negotiate(req.headers.accept, this.options.aggregatedDiscovery);
      if (representation.kind === 'discovery') {
        this.sendJson(res, 200, aggregatedDiscovery(defs, path === '/api'), AGGREGATED_DISCOVERY_TYPE);
      } else {
        this.sendJson(res, 200, path === '/api' ? coreVersions(this.options.serverAddress()) : groupList(defs));
      }
      return;
    }
    if (method === 'GET' && parts[0] === 'apis' && parts.length === 2) {
      const group = apiGroup(defs, parts[1]);
      if (!group) {
        throw resourceNotFound();
      }
      this.sendJson(res, 200, group);
      return;
    }
    if (method === 'GET' && parts[0] === 'openapi' && parts[1] === 'v3') {
      const doc = parts.length === 2 ? openApiRoot(defs) : parts[2] === 'api' ? openApiGroupVersion(defs, '', parts[3] ?? '') : openApiGroupVersion(defs, parts[3] ?? '', parts[4] ?? '');
      if (!doc) {
        throw resourceNotFound();
      }
      this.sendJson(res, 200, doc);
      return;
    }
    const gv = parseResourcePath(parts);
    if (!gv) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('404 page not found\n');
      return;
    }
    if (gv.rest.length === 0) {
      const list = method === 'GET' ? resourceList(defs, gv.group, gv.version) : undefined;
      if (!list) {
        throw resourceNotFound();
      }
      this.sendJson(res, 200, list);
      return;
    }
    const target = toResourcePath(gv.group, gv.version, gv.rest);
    if (!target) {
      throw resourceNotFound();
    }
    await this.serveResource(req, res, url, target, user);
  }

  private async serveResource(req: IncomingMessage, res: ServerResponse, url: URL, target: ResourcePath, user: UserInfo): Promise<void> {
    const { api } = this.options;
    const def = api.resource(target.group, target.version, target.resource);
    if (!def.namespaced && target.namespace !== undefined) {
      throw resourceNotFound();
    }
    if (def.namespaced && target.name !== undefined && target.namespace === undefined) {
      throw resourceNotFound();
    }
    const sub = target.subresource;
    if (sub !== undefined && !def.subresources.some((s) => s.name === sub)) {
      throw resourceNotFound();
    }
    const query = url.searchParams;
    const dryRun = query.getAll('dryRun').includes('All');
    const method = req.method ?? 'GET';
    const name = target.name;
    const ns = target.namespace;
    if (sub === undefined) {
      const verb = this.verbOf(method, name, query);
      if (!def.verbs.includes(verb)) {
        throw methodNotAllowed(verb, subjectOf(def, name));
      }
    }
    if (method === 'POST' && def.group === 'authorization.k8s.io' && ACCESS_REVIEW_KINDS[def.resource] !== undefined) {
      const body = await this.readBody(req);
      this.sendJson(res, 201, answerAccessReview(this.options.authorizer, def.resource, ns, user, body));
      return;
    }
    if (method === 'POST' && def.group === 'authentication.k8s.io' && def.resource === 'selfsubjectreviews') {
      for await (const _chunk of req) {
        // The review's body carries nothing; the answer is who is asking.
      }
      this.sendJson(res, 201, {
        kind: 'SelfSubjectReview',
        apiVersion: 'authentication.k8s.io/v1',
        metadata: { creationTimestamp: kubeTime(this.options.api.clock.now()) },
        status: { userInfo: { username: user.username, ...(user.uid ? { uid: user.uid } : {}), groups: user.groups, ...(user.extra ? { extra: user.extra } : {}) } },
      });
      return;
    }

    if (method === 'GET') {
      if (name === undefined) {
        if (parseBool(query.get('watch'))) {
          await this.serveWatch(req, res, def, ns, query);
        } else {
          await this.serveList(req, res, def, ns, query);
        }
        return;
      }
      if (sub !== undefined && sub !== 'status' && sub !== 'approval') {
        throw methodNotAllowed('get', subjectOf(def, name));
      }
      this.sendRead(req, res, def, api.get(def, ns, name), query);
      return;
    }
    if (method === 'POST') {
      const body = await this.readBody(req);
      if (name === undefined) {
        if (def.namespaced && ns === undefined) {
          throw resourceNotFound();
        }
        this.sendJson(res, 201, api.create(def, ns, body, { user, dryRun }) as unknown as JsonObject);
        return;
      }
      if (sub === 'token' && def.resource === 'serviceaccounts' && def.group === '' && this.options.tokenRequests) {
        this.sendJson(res, 201, this.options.tokenRequests.request(ns ?? '', name, body));
        return;
      }
      if (sub === 'eviction' && def.resource === 'pods' && def.group === '') {
        const status = evictPod(api, ns ?? '', name, body ?? {}, user, dryRun);
        this.sendJson(res, 201, status);
        return;
      }
      throw methodNotAllowed('create', subjectOf(def, name));
    }
    if (name === undefined && method !== 'DELETE') {
      throw new ApiError(failureStatus(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}));
    }
    if (method === 'PUT' && name !== undefined) {
      const body = await this.readBody(req);
      const subresource = sub === 'finalize' ? 'status' : sub;
      this.sendJson(res, 200, api.update(def, ns, name, body, { user, dryRun, subresource }) as unknown as JsonObject);
      return;
    }
    if (method === 'PATCH' && name !== undefined) {
      const type = mediaType(req.headers['content-type']);
      if (!(PATCH_CONTENT_TYPES as readonly string[]).includes(type)) {
        throw unsupportedMediaType(type, PATCH_CONTENT_TYPES);
      }
      const body = await this.readBody(req);
      if (body === undefined) {
        throw badRequest('the body of the request was empty');
      }
      this.sendJson(res, 200, api.patch(def, ns, name, type as PatchType, body, { user, dryRun, subresource: sub }) as unknown as JsonObject);
      return;
    }
    if (method === 'DELETE') {
      const body = await this.readBody(req);
      const options = this.deleteOptions(body, query, user, dryRun);
      if (name !== undefined) {
        this.sendJson(res, 200, api.delete(def, ns, name, options) as unknown as JsonObject);
        return;
      }
      const selected = this.select(def, ns, query);
      const deleted = api.deleteCollection(def, selected, options);
      this.sendJson(res, 200, {
        kind: `${def.kind}List`,
        apiVersion: apiVersionOf(def),
        metadata: { resourceVersion: String(api.store.resourceVersion) },
        items: deleted as unknown as JsonObject[],
      });
      return;
    }
    throw new ApiError(failureStatus(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}));
  }

  private verbOf(method: string, name: string | undefined, query: URLSearchParams): string {
    switch (method) {
      case 'GET':
        return name !== undefined ? 'get' : parseBool(query.get('watch')) ? 'watch' : 'list';
      case 'POST':
        return 'create';
      case 'PUT':
        return 'update';
      case 'PATCH':
        return 'patch';
      case 'DELETE':
        return name !== undefined ? 'delete' : 'deletecollection';
      default:
        return method.toLowerCase();
    }
  }

  private deleteOptions(body: JsonValue | undefined, query: URLSearchParams, user: UserInfo, dryRun: boolean): DeleteOptions {
    const raw: JsonObject = isJsonObject(body) ? body : {};
    const options: DeleteOptions = { user, dryRun: dryRun || (Array.isArray(raw['dryRun']) && raw['dryRun'].includes('All')) };
    const grace = typeof raw['gracePeriodSeconds'] === 'number' ? raw['gracePeriodSeconds'] : optionalInt(query.get('gracePeriodSeconds'), 'gracePeriodSeconds');
    if (grace !== undefined) {
      options.gracePeriodSeconds = grace;
    }
    const pre = raw['preconditions'];
    if (isJsonObject(pre)) {
      options.preconditions = {
        uid: typeof pre['uid'] === 'string' ? pre['uid'] : undefined,
        resourceVersion: typeof pre['resourceVersion'] === 'string' ? pre['resourceVersion'] : undefined,
      };
    }
    const policy = raw['propagationPolicy'] ?? query.get('propagationPolicy');
    if (policy === 'Orphan' || policy === 'Background' || policy === 'Foreground') {
      options.propagationPolicy = policy;
    } else if (raw['orphanDependents'] === true || query.get('orphanDependents') === 'true') {
      options.propagationPolicy = 'Orphan';
    }
    return options;
  }

  private select(def: ResourceDefinition, ns: string | undefined, query: URLSearchParams, afterKey?: string, atRv?: number): KubeObject[] {
    const labels = parseLabelSelector(query.get('labelSelector') ?? undefined);
    const fields = parseFieldSelector(query.get('fieldSelector') ?? undefined, def.fieldLabels);
    const nodeName = def.group === '' && def.resource === 'pods' ? fields.equalityValue('spec.nodeName') : undefined;
    const store = this.options.api.store;
    const objects = atRv === undefined ? store.list(def, { namespace: ns, nodeName, afterKey }) : store.listAt(def, atRv, { namespace: ns, nodeName, afterKey });
    return objects.filter((obj) => labels.matches(obj.metadata.labels) && fields.matches(obj));
  }

  /**
   * The resourceVersion a list is served at and where it starts, from `continue`, `resourceVersion`
   * and `resourceVersionMatch` as the etcd3 store reads them: a continue token is served at its
   * first page's resourceVersion (410 with a token to go on inconsistently once that is
   * compacted), `resourceVersionMatch=Exact` at the given one, anything else at the latest.
   */
  private async listPosition(query: URLSearchParams): Promise<{ rv: number; afterKey?: string }> {
    const store = this.options.api.store;
    const continueToken = query.get('continue');
    const rvParam = query.get('resourceVersion') ?? '';
    const match = query.get('resourceVersionMatch') ?? '';
    const problems: FieldError[] = [];
    if (match !== '') {
      if (rvParam === '') {
        problems.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden unless resourceVersion is provided' });
      }
      if (continueToken) {
        problems.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden when continue is provided' });
      }
      if (match !== 'Exact' && match !== 'NotOlderThan') {
        problems.push({ type: 'NotSupported', field: 'resourceVersionMatch', value: match, detail: 'supported values: "Exact", "NotOlderThan", ""' });
      } else if (match === 'Exact' && rvParam === '0') {
        problems.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"' });
      }
    }
    if (problems.length > 0) {
      throw invalid({ resource: 'ListOptions', group: 'meta.k8s.io', kind: 'ListOptions', name: '' }, problems);
    }
    if (continueToken) {
      if (rvParam !== '' && rvParam !== '0') {
        throw badRequest('specifying resource version is not allowed when using continue');
      }
      const position = decodeContinue(continueToken);
      if (position.rv === -1) {
        return { rv: store.resourceVersion, afterKey: position.afterKey };
      }
      if (position.rv < store.compactedResourceVersion) {
        const status = expired(CONTINUE_EXPIRED).status;
        status.metadata = { continue: encodeContinue(-1, position.afterKey) };
        throw new ApiError(status);
      }
      return position;
    }
    if (rvParam === '' || rvParam === '0') {
      return { rv: store.resourceVersion };
    }
    if (!/^\d+$/.test(rvParam)) {
      throw badRequest(`invalid resource version "${rvParam}"`);
    }
    const wanted = Number(rvParam);
    if (wanted > store.resourceVersion && !(await store.waitForResourceVersion(wanted, this.options.tooLargeResourceVersionWaitMs))) {
      throw tooLargeResourceVersion(wanted, store.resourceVersion);
    }
    if (match === 'Exact') {
      if (wanted < store.compactedResourceVersion) {
        throw expired('The resourceVersion for the provided list is too old.');
      }
      return { rv: wanted };
    }
    return { rv: store.resourceVersion };
  }

  private includeObject(query: URLSearchParams): IncludeObject {
    const value = query.get('includeObject');
    return value === 'None' || value === 'Object' ? value : 'Metadata';
  }

  private sendRead(req: IncomingMessage, res: ServerResponse, def: ResourceDefinition, obj: KubeObject, query: URLSearchParams): void {
    const representation = negotiate(req.headers.accept);
    const store = this.options.api.store;
    if (representation.kind === 'table') {
      const table = toTable(def, [obj], { includeObject: this.includeObject(query), resourceVersion: obj.metadata.resourceVersion ?? '', now: this.options.api.clock.now() });
      table['apiVersion'] = `meta.k8s.io/${representation.version}`;
      this.sendJson(res, 200, table, `application/json;as=Table;v=${representation.version};g=meta.k8s.io`);
    } else if (representation.kind === 'metadata') {
      this.sendJson(res, 200, { ...partialObjectMetadata(obj), apiVersion: `meta.k8s.io/${representation.version}` }, `application/json;as=PartialObjectMetadata;v=${representation.version};g=meta.k8s.io`);
    } else {
      this.sendJson(res, 200, store.json(def, obj));
    }
  }

  private async serveList(req: IncomingMessage, res: ServerResponse, def: ResourceDefinition, ns: string | undefined, query: URLSearchParams): Promise<void> {
    const representation = negotiate(req.headers.accept);
    const limit = optionalInt(query.get('limit'), 'limit');
    const position = await this.listPosition(query);
    const rv = position.rv;
    const selected = this.select(def, ns, query, position.afterKey, rv < this.options.api.store.resourceVersion ? rv : undefined);
    const page = limit !== undefined && limit > 0 && selected.length > limit ? selected.slice(0, limit) : selected;
    const metadata: JsonObject = { resourceVersion: String(rv) };
    if (page.length < selected.length) {
      const last = page[page.length - 1];
      metadata['continue'] = encodeContinue(rv, last.metadata.namespace && def.namespaced ? `${last.metadata.namespace}/${last.metadata.name ?? ''}` : (last.metadata.name ?? ''));
      if (!query.get('labelSelector') && !query.get('fieldSelector')) {
        metadata['remainingItemCount'] = selected.length - page.length;
      }
    }
    if (representation.kind === 'table') {
      const table = toTable(def, page, {
        includeObject: this.includeObject(query),
        resourceVersion: String(rv),
        continueToken: typeof metadata['continue'] === 'string' ? metadata['continue'] : undefined,
        remainingItemCount: typeof metadata['remainingItemCount'] === 'number' ? metadata['remainingItemCount'] : undefined,
        now: this.options.api.clock.now(),
      });
      table['apiVersion'] = `meta.k8s.io/${representation.version}`;
      this.sendJson(res, 200, table, `application/json;as=Table;v=${representation.version};g=meta.k8s.io`);
      return;
    }
    if (representation.kind === 'metadata') {
      this.sendJson(
        res,
        200,
        { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${representation.version}`, metadata, items: page.map(partialObjectMetadata) },
        `application/json;as=PartialObjectMetadataList;v=${representation.version};g=meta.k8s.io`,
      );
      return;
    }
    const store = this.options.api.store;
    const prefix = `{"apiVersion":"${apiVersionOf(def)}","kind":"${def.kind}",`;
    const items = page.map((obj) => {
      const json = store.json(def, obj);
      return json.startsWith(prefix) ? `{${json.slice(prefix.length)}` : json;
    });
    const head = JSON.stringify({ kind: `${def.kind}List`, apiVersion: apiVersionOf(def), metadata });
    this.sendJson(res, 200, `${head.slice(0, -1)},"items":[${items.join(',')}]}`);
  }

  private async serveWatch(req: IncomingMessage, res: ServerResponse, def: ResourceDefinition, ns: string | undefined, query: URLSearchParams): Promise<void> {
    const representation = negotiate(req.headers.accept);
    const store = this.options.api.store;
    const rvParam = query.get('resourceVersion') ?? '';
    if (/^\d+$/.test(rvParam) && Number(rvParam) > store.resourceVersion && !(await store.waitForResourceVersion(Number(rvParam), this.options.tooLargeResourceVersionWaitMs))) {
      throw tooLargeResourceVersion(Number(rvParam), store.resourceVersion);
    }
    // Like the API server: the client's timeoutSeconds, else --min-request-timeout × rand[1, 2).
    const timeoutSeconds = optionalInt(query.get('timeoutSeconds'), 'timeoutSeconds') ?? this.options.minRequestTimeoutSeconds * (1 + Math.random());
    const includeObject = this.includeObject(query);
    const encode = (obj: KubeObject, rv: number, json?: string): string => {
      if (representation.kind === 'table') {
        const table = toTable(def, [obj], { includeObject, resourceVersion: String(rv), now: this.options.api.clock.now() });
        table['apiVersion'] = `meta.k8s.io/${representation.version}`;
        return JSON.stringify(table);
      }
      if (representation.kind === 'metadata') {
        return JSON.stringify({ ...partialObjectMetadata(obj), apiVersion: `meta.k8s.io/${representation.version}` });
      }
      return json ?? JSON.stringify(obj);
    };
    const sendInitial = query.get('sendInitialEvents');
    let finished = false;
    let handle: WatchHandle | undefined = undefined;
    handle = serveWatch(
      this.options.api.store,
      req,
      res,
      {
        def,
        namespace: ns,
        labelSelector: parseLabelSelector(query.get('labelSelector') ?? undefined),
        fieldSelector: parseFieldSelector(query.get('fieldSelector') ?? undefined, def.fieldLabels),
        resourceVersion: query.get('resourceVersion') ?? undefined,
        timeoutSeconds,
        allowBookmarks: parseBool(query.get('allowWatchBookmarks')),
        sendInitialEvents: sendInitial === null ? undefined : parseBool(sendInitial),
        encode,
        contentType: 'application/json',
      },
      this.options.bookmarkIntervalMs,
      () => {
        finished = true;
        if (handle) {
          this.watches.delete(handle);
        }
      },
    );
    if (!finished) {
      this.watches.add(handle);
    }
  }
}
