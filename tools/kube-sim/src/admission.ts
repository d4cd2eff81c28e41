import type { KubeObject } from './kube-object';
import type { ResourceDefinition } from './resource-definition';
import type { UserInfo } from './user-info';

/** What a validating admission plugin sees of a write (admission.Attributes). */
export interface AdmissionRequest {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  def: ResourceDefinition;
  /** `status`, `approval`, `eviction`, ... or empty. */
  subresource: string;
  namespace: string;
  name: string;
  /** The object to be stored (CREATE, UPDATE) or the Eviction (pods/eviction CREATE). */
  object?: KubeObject;
  /** The stored object (UPDATE, DELETE, pods/eviction). */
  oldObject?: KubeObject;
  user: UserInfo;
  dryRun: boolean;
}

/**
 * A validating admission plugin: returns to admit, throws an ApiError (usually 403 Forbidden) to
 * refuse. Runs after the strategy's validation, before anything is stored.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/
 */
export type AdmissionPlugin = (request: AdmissionRequest) => void;
