import type { InstallRunEntity, InstallRunNotices, InstallRunStore, StepEventEntity } from '@ccos/api/data-access-db';
import { type CodedFields, codedFields, runEventFields, runFields } from '@ccos/api/util-graphql';
import { summariseSteps } from '@ccos/shared/domain';
import { isMessage } from '@ccos/shared/messages';
import type { InstallRunType, StepEventType } from './install-run.type';

/** Running runs whose events a view keeps between reads (the most recently read). */
export const RUNS_WITH_EVENTS_KEPT = 1_000;

/**
 * Builds the GraphQL view of a run: its step summaries, its events in order, the service's notices and its diagnostics.
 *
 * Every event of an installing node is followed by a view of its run (each `installProgress`
 * message carries the run's steps), so a run's events are kept once read and only those after them
 * are read the next time: a view costs the events that are new, not all of the run's again. Only a
 * gap-free run of events from seq 1 is kept: an event stored late with a lower seq than one already
 * read (a retried batch, another replica) is then still found.
 */
export class InstallRunView {
  private readonly keptEvents = new Map<string, StepEventEntity[]>();

  constructor(
    private readonly runs: InstallRunStore,
    private readonly notices: InstallRunNotices,
    private readonly runsKept = RUNS_WITH_EVENTS_KEPT,
  ) {}

  async of(run: InstallRunEntity): Promise<InstallRunType> {
    const [events, diagnostics, notices] = await Promise.all([
      this.eventsOf(run),
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

  /** Only a running run's events are kept: an ended run is rarely viewed again, and memory stays bounded by the runs at work. */
  private async eventsOf(run: InstallRunEntity): Promise<StepEventEntity[]> {
    const kept = this.keptEvents.get(run.id) ?? [];
    const newer = await this.runs.events.list(run.id, kept.at(-1)?.seq ?? 0);
    const events = newer.length === 0 ? kept : [...kept, ...newer];
    const gapFree = events.findIndex((event, index) => event.seq !== index + 1);
    this.keptEvents.delete(run.id);
    if (run.status === 'RUNNING' && gapFree !== 0 && events.length > 0) {
      this.keptEvents.set(run.id, gapFree === -1 ? events : events.slice(0, gapFree));
      if (this.keptEvents.size > this.runsKept) {
        this.keptEvents.delete(this.keptEvents.keys().next().value as string);
      }
    }
    return events;
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
