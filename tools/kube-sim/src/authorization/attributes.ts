import type { UserInfo } from '../user-info';

/**
 * What the authorizer decides on, as the API server's authorizer.Attributes: a resource request
 * (verb, group, resource, subresource, namespace, name) or a non-resource request (path, verb).
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authorization/#review-your-request-attributes
 */
export interface Attributes {
  user: UserInfo;
  verb: string;
  resourceRequest: boolean;
  /** URL path, for non-resource requests. */
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** A resource request's attributes with the blanks filled. */
export function resourceAttributes(user: UserInfo, fields: Partial<Omit<Attributes, 'user' | 'resourceRequest'>> & { verb: string; resource: string }): Attributes {
  return {
    user,
    resourceRequest: true,
    path: '',
    apiGroup: fields.apiGroup ?? '',
    apiVersion: fields.apiVersion ?? '',
    resource: fields.resource,
    subresource: fields.subresource ?? '',
    namespace: fields.namespace ?? '',
    name: fields.name ?? '',
    verb: fields.verb,
  };
}

/** A non-resource request's attributes (`/healthz`, `/apis`). */
export function nonResourceAttributes(user: UserInfo, verb: string, path: string): Attributes {
  return { user, verb, resourceRequest: false, path, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
}

/** `pods/eviction` or `pods`. */
export function combinedResource(attrs: Pick<Attributes, 'resource' | 'subresource'>): string {
  return attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
}
