import type { RemovalPhase } from '@ccos/shared/domain';
import { CleanHostPhase, type CleanHostPorts } from './clean-host.phase';
import { DeleteNodePhase, type DeleteNodePorts } from './delete-node.phase';
import { DenyCsrsPhase, type DenyCsrsPorts } from './deny-csrs.phase';
import { DrainPhase, type DrainPorts } from './drain.phase';
import type { RemovalPhaseHandler } from './removal-phase';
import { RevokeTokensPhase, type RevokeTokensPorts } from './revoke-tokens.phase';
import { StopKubeletPhase, type StopKubeletPorts } from './stop-kubelet.phase';

export type RemovalPhaseRegistry = Readonly<Record<Exclude<RemovalPhase, 'DONE'>, RemovalPhaseHandler>>;

/** What all the phases need together. */
export type RemovalPhasePorts = DrainPorts & StopKubeletPorts & DeleteNodePorts & DenyCsrsPorts & RevokeTokensPorts & CleanHostPorts;

/** Phases as data: the one place that says which handler runs a phase (their order is the domain's REMOVAL_PHASES). */
export function removalPhaseRegistry(ports: RemovalPhasePorts): RemovalPhaseRegistry {
  return {
    DRAIN: new DrainPhase(ports),
    STOP_KUBELET: new StopKubeletPhase(ports),
    DELETE_NODE: new DeleteNodePhase(ports),
    DENY_CSRS: new DenyCsrsPhase(ports),
    REVOKE_TOKENS: new RevokeTokensPhase(ports),
    CLEAN_HOST: new CleanHostPhase(ports),
  };
}
