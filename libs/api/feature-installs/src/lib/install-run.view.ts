import type { InstallRunEntity, InstallRunNotices, InstallRunStore, StepEventEntity } from '@ccos/api/data-access-db';
import { type CodedFields, codedFields, runEventFields, runFields } from '@ccos/api/util-graphql';
import { summariseSteps } from '@ccos/shared/domain';
import { isMessage } from '@ccos/shared/messages';
import type { InstallRunType, StepEventType } from './install-run.type';

/** Builds the GraphQL view of a run: its step summaries, its events in order, the service's notices and its diagnostics. */
export class InstallRunView {
  constructor(
    private readonly runs: InstallRunStore,
    private readonly notices: InstallRunNotices,
  ) {}

  async of(run: InstallRunEntity): Promise<InstallRunType> {
    const [events, diagnostics, notices] = await Promise.all([
      this.runs.events.list(run.id),
      this.runs.diagnosticsSummaryOf(run.id),
      this.notices.of(run.id),
    ]);
    const steps = summariseSteps(events.map((event) => ({ ...event, coded: event.messageCoded, at: event.occurredAt })));
    return {
      ...runFields(run, events.at(-1)?.seq ?? 0),
      status: run.status,
      purpose: run.purpose,
      startStep: run.startStep,
      onlySteps: run.steps,
      failedStep: run.failedStep,
      agentChannel: run.agentChannel,
      lastEventAt: run.lastEventAt,
      admittedAt: run.admittedAt,
      deadlineAt: run.admittedAt ? run.deadlineAt : null,
      bootstrapIdentity: run.bootstrapIdentity,
      bootstrapIdentityRevokedAt: run.bootstrapIdentityRevokedAt,
      eventsCappedAt: run.eventsCappedAt,
      notices: notices.map(({ kind, subject, message, detail, count, firstAt, lastAt }) => ({ kind, subject, message, ...codedNotice(detail), count, firstAt, lastAt })),
      steps: steps.map(({ step, state, progress, message, coded, startedAt, finishedAt }) => ({ step, status: state, progress, message, ...codedFields('message', coded), startedAt, finishedAt })),
      events: events.map(toStepEventType),
      diagnostics: diagnostics ? { size: diagnostics.size, uploadedAt: diagnostics.uploadedAt, url: `/api/install-runs/${run.id}/diagnostics.tar.gz` } : null,
    };
  }
}

export function toStepEventType(event: StepEventEntity): StepEventType {
  return { ...runEventFields(event), step: event.step, status: event.status, progress: event.progress };
}

/** A notice's text by its code, kept in its detail (notices raised before texts were coded have none). */
function codedNotice(detail: Record<string, unknown> | null): CodedFields<'message'> {
  const coded = detail?.['messageCoded'];
  return codedFields('message', isMessage(coded) ? coded : null);
}
