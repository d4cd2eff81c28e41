import { notAcceptable } from './api-error';

/** The representations the simulator can answer a read with. */
export type Representation =
  | { kind: 'json' }
  | { kind: 'table'; version: 'v1' | 'v1beta1' }
  | { kind: 'metadata'; version: 'v1' | 'v1beta1' }
  | { kind: 'discovery' };

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || header.trim() === '') {
    return [{ type: 'application/json', params: {} }];
  }
  return header.split(',').map((part) => {
    const [type, ...rest] = part.trim().split(';');
    const params: Record<string, string> = {};
    for (const p of rest) {
      const [k, v] = p.split('=');
      if (k && v !== undefined) {
        params[k.trim()] = v.trim();
      }
    }
    return { type: type.trim().toLowerCase(), params };
  });
}

/**
 * Picks the first media range of the Accept header the server can produce: JSON, a
 * meta.k8s.io Table, PartialObjectMetadata(List), or (discovery endpoints) an aggregated
 * APIGroupDiscoveryList. Protobuf is not offered.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#alternate-representations-of-resources
 */
export function negotiate(header: string | undefined, allowDiscovery = false): Representation {
  for (const range of parseAccept(header)) {
    const jsonLike = range.type === 'application/json' || range.type === '*/*' || range.type === 'application/*';
    if (!jsonLike) {
      continue;
    }
    const as = range.params['as'];
    if (as === undefined) {
      return { kind: 'json' };
    }
    const version = range.params['v'];
    if (as === 'Table' && range.params['g'] === 'meta.k8s.io' && (version === 'v1' || version === 'v1beta1')) {
      return { kind: 'table', version };
    }
    if ((as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && range.params['g'] === 'meta.k8s.io' && (version === 'v1' || version === 'v1beta1')) {
      return { kind: 'metadata', version };
    }
    if (allowDiscovery && as === 'APIGroupDiscoveryList' && range.params['g'] === 'apidiscovery.k8s.io' && version === 'v2') {
      return { kind: 'discovery' };
    }
  }
  throw notAcceptable(['application/json', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io']);
}
