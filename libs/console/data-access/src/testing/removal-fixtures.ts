import type { RemovalEventKind } from '@ccos/shared/api-schema';
import type { RemovalEventView, RemovalRunView } from '../lib/removals/removal';

/** A removal run as the API sends it: RUNNING, draining, kubectl's defaults, unless `overrides` say otherwise. */
export function removalRun(overrides: Partial<RemovalRunView> = {}): RemovalRunView {
  return {
    id: 'removal-1',
    nodeId: 'n-1',
    clusterId: 'c-1',
    nodeName: 'worker-1',
    status: 'RUNNING',
    phase: 'DRAIN',
    options: { force: false, deleteEmptyDirData: false, ignoreDaemonSets: true, gracePeriodSeconds: -1, timeoutSeconds: 0, allowLastWorker: false, ungraceful: false, cleanHost: false },
    reason: null,
    reasonCode: null,
    reasonParams: null,
    blocking: [],
    cancelRequested: false,
    requestedBy: 'admin',
    startedAt: '2026-11-30T05:00:00.000Z',
    finishedAt: null,
    lastSeq: 0,
    nodeStatus: 'REMOVING',
    nodeStatusReason: null,
    nodeStatusReasonCode: null,
    nodeStatusReasonParams: null,
    ...overrides,
  } as RemovalRunView;
}

/** Something a removal run did or saw (while draining, unless `overrides` names its phase). */
export function removalEvent(seq: number, kind: RemovalEventKind, overrides: Partial<RemovalEventView> = {}): RemovalEventView {
  return { seq, kind, phase: 'DRAIN', pod: null, pdb: null, message: `event ${seq}`, messageCode: null, messageParams: null, detail: null, occurredAt: '2026-11-30T05:00:00.000Z', ...overrides } as RemovalEventView;
}
