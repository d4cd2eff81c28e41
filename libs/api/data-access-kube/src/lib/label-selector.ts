import type { V1LabelSelector } from '@kubernetes/client-node';

/**
 * Whether a structured label selector matches a set of labels. As in policy/v1
 * PodDisruptionBudgets, a missing selector matches nothing and an empty one everything.
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#resources-that-support-set-based-requirements
 * @see https://kubernetes.io/docs/tasks/run-application/configure-pdb/#arbitrary-controllers-and-selectors
 */
export function selectorMatches(selector: V1LabelSelector | undefined | null, labels: Record<string, string> | undefined): boolean {
  if (!selector) {
    return false;
  }
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (have[key] !== value) {
      return false;
    }
  }
  return (selector.matchExpressions ?? []).every((requirement) => {
    const present = Object.prototype.hasOwnProperty.call(have, requirement.key);
    const values = requirement.values ?? [];
    switch (requirement.operator) {
      case 'In':
        return present && values.includes(have[requirement.key]);
      case 'NotIn':
        return !present || !values.includes(have[requirement.key]);
      case 'Exists':
        return present;
      case 'DoesNotExist':
        return !present;
      default:
        // An operator this code does not know selects nothing rather than everything.
        return false;
    }
  });
}
