import * as agentTexts from './generated/agent-operation-texts';

/**
 * Every operation of `operations/agent.graphql`, as the agent sends it: the generator writes one
 * `…Text` per operation there, so an operation added to that file is on this list without an edit.
 * The agents' listener of the API serves these documents and no other.
 */
export const AGENT_OPERATION_TEXTS: readonly string[] = Object.values(agentTexts)
  .filter((value) => value instanceof agentTexts.TypedDocumentString)
  .map((text) => text.toString());
