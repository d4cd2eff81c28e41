import { describe, expect, it } from 'vitest';
import { NODE_STATUSES } from '@ccos/shared/domain';
import { STATUS_FAMILIES, isStatusFilter, matchesFilter, statusCounts, statusFamily, statusTone } from './node-status';

describe('node status families and badges', () => {
  it('puts every status in exactly one family, and every family has a status', () => {
    const families = new Set(NODE_STATUSES.map(statusFamily));
    expect([...families].sort()).toEqual([...STATUS_FAMILIES].sort());
  });

  it('shows failures red, stalled and drain-failed amber, joined green', () => {
    expect(statusTone('INSTALL_FAILED')).toBe('error');
    expect(statusTone('STALLED')).toBe('warn');
    expect(statusTone('DRAIN_FAILED')).toBe('warn');
    expect(statusTone('JOINED')).toBe('ok');
    expect(statusTone('REMOVED')).toBe('neutral');
  });

  it('filters by family or by one exact status, and refuses anything else from the URL', () => {
    expect(matchesFilter({ status: 'AUTH_FAILED' }, 'attention')).toBe(true);
    expect(matchesFilter({ status: 'AUTH_FAILED' }, 'UNREACHABLE')).toBe(false);
    expect(matchesFilter({ status: 'REMOVED' }, 'all')).toBe(true);
    expect(isStatusFilter('joined')).toBe(true);
    expect(isStatusFilter('JOINED')).toBe(true);
    expect(isStatusFilter('<script>')).toBe(false);
    expect(isStatusFilter(null)).toBe(false);
  });

  it('counts each status and each family for the filter’s options, leaving out what no node has', () => {
    const counts = statusCounts((['JOINED', 'JOINED', 'AUTH_FAILED', 'STALLED', 'INSTALLING'] as const).map((status) => ({ status })));
    expect(counts.get('JOINED')).toBe(2);
    expect(counts.get('joined')).toBe(2);
    expect(counts.get('attention')).toBe(2);
    expect(counts.get('progress')).toBe(1);
    expect(counts.has('REMOVED')).toBe(false);
    expect(counts.has('removed')).toBe(false);
    expect(statusCounts([]).size).toBe(0);
  });

  it('filters and counts hosts that drifted or are outdated, by what their hosts run', () => {
    const nodes = [{ status: 'JOINED', hostState: 'DRIFTED' }, { status: 'JOINED', hostState: 'CURRENT' }, { status: 'JOINED', hostState: 'OUTDATED' }, { status: 'INSTALLING', hostState: null }] as const;
    expect(nodes.filter((node) => matchesFilter(node, 'drifted'))).toEqual([nodes[0]]);
    expect(nodes.filter((node) => matchesFilter(node, 'outdated'))).toEqual([nodes[2]]);
    const counts = statusCounts(nodes);
    expect([counts.get('drifted'), counts.get('outdated'), counts.get('joined')]).toEqual([1, 1, 3]);
    expect(isStatusFilter('drifted')).toBe(true);
  });
});
