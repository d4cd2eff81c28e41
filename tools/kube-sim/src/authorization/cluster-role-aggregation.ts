import { cloneJson, isJsonObject, jsonEqual, type JsonObject } from '../json-value';
import type { KubeObject } from '../kube-object';
import type { ResourceDefinition } from '../resource-definition';
import { labelSelectorFromObject } from '../selectors';
import type { ObjectStore, StoreEvent } from '../store';

function selectorsOf(role: KubeObject): JsonObject[] {
  const rule = role['aggregationRule'];
  const list = isJsonObject(rule) ? rule['clusterRoleSelectors'] : undefined;
  return Array.isArray(list) ? list.filter(isJsonObject) : [];
}

/**
 * The clusterrole-aggregation controller: a ClusterRole with an `aggregationRule` gets the rules of
 * every other ClusterRole its selectors match (in name order, duplicates dropped), whenever a
 * ClusterRole changes.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/rbac/#aggregated-clusterroles
 */
export class ClusterRoleAggregationController {
  private readonly unsubscribe: () => void;
  private readonly clusterRoles: ResourceDefinition;

  constructor(private readonly store: ObjectStore) {
    const def = store.definitions.find((d) => d.group === 'rbac.authorization.k8s.io' && d.resource === 'clusterroles');
    if (!def) {
      throw new Error('clusterroles are not served');
    }
    this.clusterRoles = def;
    this.unsubscribe = store.subscribe((event) => this.onEvent(event));
  }

  private onEvent(event: StoreEvent): void {
    if (event.resource === this.clusterRoles) {
      this.syncAll();
    }
  }

  /** Recomputes every aggregated ClusterRole; writes only those whose rules change. */
  syncAll(): void {
    const roles = this.store.list(this.clusterRoles);
    for (const role of roles) {
      const selectors = selectorsOf(role).map((s) => labelSelectorFromObject(s));
      if (selectors.length === 0) {
        continue;
      }
      const rules: JsonObject[] = [];
      for (const other of roles) {
        if (other.metadata.name === role.metadata.name || !selectors.some((s) => s.matches(other.metadata.labels))) {
          continue;
        }
        for (const rule of Array.isArray(other['rules']) ? other['rules'].filter(isJsonObject) : []) {
          if (!rules.some((r) => jsonEqual(r, rule))) {
            rules.push(rule);
          }
        }
      }
      if (!jsonEqual(role['rules'] ?? [], rules)) {
        const updated = cloneJson(role);
        updated['rules'] = rules;
        this.store.replace(this.clusterRoles, updated);
      }
    }
  }

  stop(): void {
    this.unsubscribe();
  }
}
