import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REMOVAL_OPTIONS } from '@ccos/shared/domain';
import { createTestDatabase, type TestDatabase } from '../testing';
import { openDatabase } from './data-source';
import { ClusterEntity } from './entities/cluster.entity';
import { InstallRunEntity } from './entities/install-run.entity';
import { NodeEntity } from './entities/node.entity';
import { RemovalEventEntity } from './entities/removal-event.entity';
import { RemovalRunEntity } from './entities/removal-run.entity';
import { StepEventEntity } from './entities/step-event.entity';
import type { NewStepEvent } from './install-run.store';
import type { NewRemovalEvent } from './removal-run.store';
import { RunEventLog } from './run-event-log';

describe('run event log', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let clusterId: string;
  let nodeId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url, maxConnections: 8 });
    clusterId = randomUUID();
    nodeId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: 'c', apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    await dataSource.getRepository(NodeEntity).insert({ id: nodeId, clusterId, hostname: 'w1', status: 'JOINED' });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const installRun = async () => {
    const id = randomUUID();
    await dataSource.getRepository(InstallRunEntity).insert({ id, nodeId, status: 'RUNNING', requestedBy: 'operator' });
    return id;
  };
  const removalRun = async () => {
    const id = randomUUID();
    await dataSource.getRepository(RemovalRunEntity).insert({ id, nodeId, clusterId, nodeName: 'w1', status: 'FAILED', phase: 'DRAIN', options: DEFAULT_REMOVAL_OPTIONS, requestedBy: 'operator' });
    return id;
  };
  const stepEvent = (seq: number, message = `event ${seq}`): NewStepEvent & { seq: number } => ({
    seq, step: 'PREFLIGHT', status: 'PROGRESS', progress: seq, message, messageCoded: null, detail: null, occurredAt: new Date(),
  });
  const removalEvent = (message: string): NewRemovalEvent => ({ kind: 'POD_DELETED', phase: 'DRAIN', pod: null, pdb: null, message, messageCoded: null, detail: null, occurredAt: new Date() });

  describe('numbered by its writer', () => {
    const log = () => new RunEventLog<StepEventEntity, NewStepEvent>(dataSource, StepEventEntity);

    it('lists events in seq order whatever order they came in, and after a given seq', async () => {
      const runId = await installRun();
      expect(await log().append(runId, [stepEvent(3), stepEvent(1)])).toEqual([3, 1]);
      expect(await log().append(runId, [stepEvent(2)])).toEqual([2]);
      expect((await log().list(runId)).map((event) => event.seq)).toEqual([1, 2, 3]);
      expect((await log().list(runId, 1)).map((event) => event.seq)).toEqual([2, 3]);
      expect(await log().list(runId, 3)).toEqual([]);
      expect(await log().lastSeq(runId)).toBe(3);
      expect(await log().count(runId)).toBe(3);
      expect([await log().has(runId, 2), await log().has(runId, 4)]).toEqual([true, false]);
    });

    it('keeps the first of a re-sent event and says which seqs were stored now', async () => {
      const runId = await installRun();
      await log().append(runId, [stepEvent(1)]);
      expect(await log().append(runId, [stepEvent(1, 'sent again'), stepEvent(2)])).toEqual([2]);
      expect(await log().append(runId, [stepEvent(2, 'sent again')])).toEqual([]);
      expect((await log().list(runId)).map((event) => [event.seq, event.message])).toEqual([[1, 'event 1'], [2, 'event 2']]);
    });

    it('stores an event sent twice at once exactly once', async () => {
      const runId = await installRun();
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => log().append(runId, [stepEvent(1, `copy ${i}`)])));
      expect(answers.flat()).toEqual([1]);
      expect(await log().count(runId)).toBe(1);
    });

    it('keeps each run to itself', async () => {
      const [first, second] = [await installRun(), await installRun()];
      await log().append(first, [stepEvent(1), stepEvent(2)]);
      expect(await log().append(second, [stepEvent(1)])).toEqual([1]);
      expect([await log().lastSeq(first), await log().lastSeq(second), await log().lastSeq(randomUUID())]).toEqual([2, 1, 0]);
    });
  });

  describe('numbered by the log', () => {
    const log = () => new RunEventLog<RemovalEventEntity, NewRemovalEvent>(dataSource, RemovalEventEntity);

    it('numbers events after the run\'s last one, in the order given', async () => {
      const runId = await removalRun();
      expect(await log().appendNext(runId, [])).toEqual([]);
      expect(await log().appendNext(runId, [removalEvent('a'), removalEvent('b')])).toEqual([1, 2]);
      expect(await log().appendNext(runId, [removalEvent('c')])).toEqual([3]);
      expect((await log().list(runId)).map((event) => [event.seq, event.message])).toEqual([[1, 'a'], [2, 'b'], [3, 'c']]);
    });

    it('gives concurrent appends from several connections consecutive numbers without gaps, each batch in its order', async () => {
      const runId = await removalRun();
      const writers = 12;
      const batch = 5;
      const answers = await Promise.all(
        Array.from({ length: writers }, (_, writer) => log().appendNext(runId, Array.from({ length: batch }, (_, i) => removalEvent(`${writer}/${i}`)))),
      );
      expect(answers.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: writers * batch }, (_, i) => i + 1));
      const stored = new Map((await log().list(runId)).map((event) => [event.seq, event.message]));
      answers.forEach((seqs, writer) => {
        expect(seqs).toEqual(Array.from({ length: batch }, (_, i) => seqs[0] + i));
        expect(seqs.map((seq) => stored.get(seq))).toEqual(Array.from({ length: batch }, (_, i) => `${writer}/${i}`));
      });
    });

    it('lets a reader during concurrent appends see a prefix of the order: having seen seq n, it has seen every event before', async () => {
      const runId = await removalRun();
      let appending = true;
      const seen: number[][] = [];
      const reading = (async () => {
        while (appending) {
          seen.push((await log().list(runId)).map((event) => event.seq));
        }
      })();
      await Promise.all(Array.from({ length: 30 }, (_, writer) => log().appendNext(runId, [removalEvent(`${writer}`)])));
      appending = false;
      await reading;
      seen.push((await log().list(runId)).map((event) => event.seq));
      for (const seqs of seen) {
        expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
      }
      expect(seen.at(-1)).toHaveLength(30);
    });
  });
});
