import type { UserInfo } from '../user-info';
import { nonResourceAttributes, type Attributes } from './attributes';

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const DNS_SEGMENT = /^[^/%]+$/;

function methodVerb(method: string): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'GET':
    case 'HEAD':
      return 'get';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return '';
  }
}

function truthy(value: string | null): boolean {
  return value !== null && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);
}

/** `metadata.name=x` (or `==`) as the only requirement naming the name, as RequiresExactMatch finds it. */
function exactName(fieldSelector: string | null): string | undefined {
  if (!fieldSelector) {
    return undefined;
  }
  for (const term of fieldSelector.split(',')) {
    const match = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (match) {
      return match[1];
    }
  }
  return undefined;
}

/**
 * The authorizer attributes of an HTTP request, as the API server's RequestInfoFactory derives them:
 * `/api/v1/...` and `/apis/<group>/<version>/...` paths with a resource are resource requests (a
 * GET without a name is `list` or `watch`, a DELETE without one `deletecollection`, a list or watch
 * selecting `metadata.name=x` is authorized for name x, `namespaces/<ns>` carries its namespace);
 * everything else (`/api`, `/apis/<group>`, `/version`, `/healthz`) is a non-resource request with
 * the lower-case method as verb.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authorization/#determine-the-request-verb
 * @see https://github.com/kubernetes/apiserver/blob/master/pkg/endpoints/request/requestinfo.go
 */
export function requestAttributes(user: UserInfo, method: string, path: string, query: URLSearchParams): Attributes {
  const parts = path.split('/').filter(Boolean);
  let rest: string[];
  let apiGroup = '';
  let apiVersion: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    apiVersion = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    apiGroup = parts[1];
    apiVersion = parts[2];
    rest = parts.slice(3);
  } else {
    return nonResourceAttributes(user, method.toLowerCase(), path);
  }
  let verb = methodVerb(method);
  let namespace = '';
  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      namespace = rest[1];
      if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) {
        rest = rest.slice(2);
      }
    }
  }
  const resource = rest[0] ?? '';
  let name = rest.length >= 2 ? rest[1] : '';
  const subresource = rest.length >= 3 ? rest[2] : '';
  if (name === '' && verb === 'get') {
    verb = truthy(query.get('watch')) ? 'watch' : 'list';
    const selected = exactName(query.get('fieldSelector'));
    if (selected !== undefined && DNS_SEGMENT.test(selected)) {
      name = selected;
    }
  }
  if (name === '' && verb === 'delete') {
    verb = 'deletecollection';
  }
  return { user, verb, resourceRequest: true, path, apiGroup, apiVersion, resource, subresource, namespace, name };
}
