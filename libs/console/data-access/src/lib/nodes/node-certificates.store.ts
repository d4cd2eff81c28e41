import { Injectable, computed } from '@angular/core';
import { NodeCertificateChangesDocument, NodeCertificatesDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import { liveSubscription } from '../apollo/live-subscription';

/**
 * The certificates a cluster's nodes hold and their expiry (one node's, or all of the cluster's
 * for the node list), read again whenever a CSR of the cluster changes (a renewal was issued).
 * Provide it in the page; call {@link select}.
 */
@Injectable()
export class NodeCertificatesStore {
  private readonly query = liveQuery(NodeCertificatesDocument);
  private readonly changes = liveSubscription(NodeCertificateChangesDocument);
  private selected: string | null = null;

  readonly certificates = computed(() => this.query.data()?.nodeCertificates.certificates ?? []);
  readonly pendingRenewals = computed(() => this.query.data()?.nodeCertificates.pendingRenewals ?? []);
  readonly problems = this.query.problems;

  /** One node's certificates (`node` is its name), or every node's of the cluster when `node` is null. */
  select(clusterId: string, node: string | null): void {
    const key = `${clusterId}/${node ?? ''}`;
    if (key === this.selected) {
      return;
    }
    this.selected = key;
    this.query.watch({ clusterId, node });
    this.changes.stop();
    this.changes.start({ clusterId }, { next: () => this.query.refetch() });
  }
}
