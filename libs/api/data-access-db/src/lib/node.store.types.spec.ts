import { describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { type NodeStore, reasonFields } from './node.store';

/**
 * A type-level test: a node's status reason is coded text, never a bare string. The project's
 * typecheck (which includes specs) fails with "Unused '@ts-expect-error' directive" the day
 * `transition` or `createMany` accept English again (issues 28 and 31).
 */
function transitionsTakeCodedReasons(nodes: NodeStore): void {
  // @ts-expect-error a transition's reason is a coded message, not English
  void nodes.transition('n-1', 'REMOVAL_STARTED', 'removal started by admin: cordoning and draining');
  // @ts-expect-error a superseded record's reason is a coded message, not English
  void nodes.createMany([], null, { ids: ['n-2'], reason: 'its host was added again' });
  void nodes.transition('n-1', 'REMOVAL_STARTED', message('node.removalStarted', { actor: 'admin' }));
}

describe('node status reasons', () => {
  it('are stored with their code and parameters beside the English text', () => {
    expect(transitionsTakeCodedReasons).toBeTypeOf('function');
    expect(reasonFields(message('node.removalStarted', { actor: 'admin' }))).toEqual({
      statusReason: 'removal started by admin: cordoning and draining',
      statusReasonCoded: { code: 'node.removalStarted', params: { actor: 'admin' } },
    });
  });
});
