import { RemediationResolver } from './remediation.resolver';
import { type RemediatorOptions, Remediator } from './remediator';

export interface RemediationFeature {
  readonly remediator: Remediator;
  readonly resolver: RemediationResolver;
  start(): void;
  stop(): void;
}

export function createRemediationFeature(options: RemediatorOptions): RemediationFeature {
  const remediator = new Remediator(options);
  return {
    remediator,
    resolver: new RemediationResolver(options.clusters, remediator),
    start: () => remediator.start(),
    stop: () => remediator.stop(),
  };
}
