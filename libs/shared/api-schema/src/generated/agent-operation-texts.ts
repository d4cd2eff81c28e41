import type * as Types from './operations';
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}

export const ReportStepText = new TypedDocumentString(`
    mutation ReportStep($input: ReportStepInput!) {
  reportStep(input: $input) {
    accepted
    duplicate
    cancelRequested
  }
}
    `) as unknown as TypedDocumentString<Types.ReportStepMutation, Types.ReportStepMutationVariables>;
export const ReportStepsText = new TypedDocumentString(`
    mutation ReportSteps($inputs: [ReportStepInput!]!) {
  reportSteps(inputs: $inputs) {
    accepted
    duplicateSeqs
    cancelRequested
  }
}
    `) as unknown as TypedDocumentString<Types.ReportStepsMutation, Types.ReportStepsMutationVariables>;
export const AgentRunText = new TypedDocumentString(`
    query AgentRun {
  agentRun {
    runId
    nodeName
    serverTime
    hostnameConflict
    hostnameConflictCode
    hostnameConflictParams
    ipConflict
    ipConflictCode
    ipConflictParams
    nodeRegistered
    nodeReady
    pendingCsrNames
    cancelRequested
  }
}
    `) as unknown as TypedDocumentString<Types.AgentRunQuery, Types.AgentRunQueryVariables>;