import { Injectable, computed } from '@angular/core';
import { AgentChannelDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';

/**
 * How install agents reach the service, as configured. The shell reads it to warn, on
 * every page, while the service lets agents use plain HTTP. Provide it in the shell.
 */
@Injectable()
export class AgentChannelStore {
  private readonly query = liveQuery(AgentChannelDocument);

  /** True while AGENT_PLAIN_HTTP=allow; false until known (no warning flashes up on a failed query). */
  readonly plainHttpAllowed = computed(() => this.query.data()?.agentChannel.plainHttpAllowed === true);

  constructor() {
    this.query.watch({});
  }
}
