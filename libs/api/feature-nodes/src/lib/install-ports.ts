/*
 * What adding nodes in batches needs of installs. feature-installs provides both (its
 * BatchInstaller, and the artifact check its InstallService runs too); start-api.ts wires them.
 */

/** Runs the batch's installs: a pass over the batch now, following its nodes until it ends. */
export interface BatchInstalls {
  kick(batchId: string): Promise<void>;
}

/**
 * Checked before a batch installs: throws (FAILED_PRECONDITION, naming what is missing) when the
 * cluster has no complete artifact set, so the batch is refused up front.
 */
export type InstallReadiness = (clusterId: string) => Promise<void>;
