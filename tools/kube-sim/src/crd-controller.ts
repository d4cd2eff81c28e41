import type { KubeObject } from './kube-object';
import type { ResourceDefinition } from './resource-definition';
import { define } from './resource-registry';
import { namesOf, versionsOf } from './resources/custom-resource-definitions';
import { STATUS_WRITE } from './resources/status-subresource';
import type { ObjectStore } from './store';

/**
 * The resources a CustomResourceDefinition serves: one per served version, JSON only, with the
 * status subresource when the version asks for it and `metadata.generation` tracked as for every
 * custom resource. Objects are stored as sent: no schema validation, pruning or defaulting.
 */
export function customResources(crd: KubeObject): ResourceDefinition[] {
  const names = namesOf(crd);
  return versionsOf(crd)
    .filter((version) => version.served)
    .map((version) => {
      const withStatus = version.subresources?.status !== undefined;
      return define({
        group: String(crd.spec?.['group'] ?? ''),
        version: version.name,
        resource: names.plural,
        kind: names.kind,
        namespaced: crd.spec?.['scope'] === 'Namespaced',
        shortNames: names.shortNames,
        categories: names.categories,
        subresources: withStatus ? [{ name: 'status', kind: '', verbs: ['get', 'patch', 'update'] }] : [],
        tracksGeneration: true,
        strategy: withStatus
          ? {
              prepareForCreate: (obj) => void delete obj.status,
              prepareForUpdate: (obj, old) => void (old.status === undefined ? delete obj.status : (obj.status = old.status)),
              subresourceWrites: { status: STATUS_WRITE },
            }
          : {},
      });
    });
}

/**
 * The part of apiextensions-apiserver that serves custom resources: every CustomResourceDefinition
 * created (or seeded) makes its served versions available at once, in discovery, OpenAPI paths and
 * RBAC like built-in resources. A deleted definition's resources stay served until the simulator
 * stops (unlike the real server, which stops serving them and deletes their objects).
 */
export class CrdController {
  private readonly unsubscribe: () => void;

  constructor(private readonly store: ObjectStore) {
    const crds = store.definitions.find((d) => d.group === 'apiextensions.k8s.io' && d.resource === 'customresourcedefinitions');
    for (const crd of crds ? store.list(crds) : []) {
      this.serve(crd);
    }
    this.unsubscribe = store.subscribe((event) => {
      if (event.resource === crds && event.type !== 'DELETED') {
        this.serve(event.object);
      }
    });
  }

  private serve(crd: KubeObject): void {
    for (const def of customResources(crd)) {
      this.store.serve(def);
    }
  }

  stop(): void {
    this.unsubscribe();
  }
}
