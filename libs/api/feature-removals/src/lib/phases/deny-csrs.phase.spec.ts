import { describe, expect, it } from 'vitest';
import { phaseHarness, runningRun } from '../../testing/phase-harness';
import { CSR_DENY_REASON, DenyCsrsPhase } from './deny-csrs.phase';

/** The phase against a cluster whose pending CSRs for the node are `pending`; denying those in `refused` fails. */
async function denyWith(pending: string[], refused: string[] = []) {
  const run = runningRun({ phase: 'DENY_CSRS', requestedBy: 'alice' });
  const h = phaseHarness(run);
  const denials: Array<[string, string, string, string]> = [];
  const phase = new DenyCsrsPhase({
    csrs: {
      pendingCsrNamesFor: async (clusterId, nodeName) => (clusterId === run.clusterId && nodeName === run.nodeName ? pending : []),
      deny: async (clusterId, name, actor, reason) => {
        if (refused.includes(name)) {
          throw new Error('the API server said no');
        }
        denials.push([clusterId, name, actor, reason]);
      },
    },
  });
  return { run, result: await phase.run(h.ctx), events: h.events, denials };
}

describe('DENY_CSRS', () => {
  it('denies every pending CSR of the node in the requester’s name', async () => {
    const { run, result, events, denials } = await denyWith(['csr-a', 'csr-b']);
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(denials).toEqual([
      [run.clusterId, 'csr-a', 'alice', CSR_DENY_REASON],
      [run.clusterId, 'csr-b', 'alice', CSR_DENY_REASON],
    ]);
    expect(events).toMatchObject([{ kind: 'CSRS_DENIED', message: { code: 'removal.event.csrsDenied', params: { count: 2, node: 'w1', csrs: 'csr-a, csr-b' } }, detail: { denied: ['csr-a', 'csr-b'], failed: [] } }]);
  });

  it('records denials that failed and goes on', async () => {
    const { result, events } = await denyWith(['csr-a', 'csr-b'], ['csr-b']);
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(events).toMatchObject([
      {
        kind: 'CSRS_DENIED',
        message: { code: 'removal.event.csrsDeniedSome', params: { count: 1, csrs: 'csr-a', failed: 'csr-b (the API server said no)' } },
        detail: { denied: ['csr-a'], failed: [{ name: 'csr-b', error: 'the API server said no' }] },
      },
    ]);
  });

  it('says when there was nothing to deny', async () => {
    const { events } = await denyWith([]);
    expect(events).toMatchObject([{ kind: 'CSRS_DENIED', message: { code: 'removal.event.noCsrs', params: { node: 'w1' } }, detail: { denied: [], failed: [] } }]);
  });
});
