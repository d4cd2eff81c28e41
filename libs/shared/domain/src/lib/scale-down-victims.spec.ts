import { describe, expect, it } from 'vitest';
import { formatMessage } from '@ccos/shared/messages';
import { type ScaleDownCandidate, pickScaleDownVictims } from './scale-down-victims';

const member = (hostname: string, overrides: Partial<ScaleDownCandidate> = {}): ScaleDownCandidate => ({
  nodeId: `id-${hostname}`,
  hostname,
  joined: true,
  health: 'HEALTHY',
  memberSince: Date.parse('2026-12-01T00:00:00Z'),
  ...overrides,
});

describe('pickScaleDownVictims', () => {
  it('takes a host that never joined, then the unhealthy, then the unknown, then the newest', () => {
    const candidates = [
      member('old', { memberSince: Date.parse('2026-11-01T00:00:00Z') }),
      member('new', { memberSince: Date.parse('2026-12-03T00:00:00Z') }),
      member('sick', { health: 'UNHEALTHY', memberSince: Date.parse('2026-10-01T00:00:00Z') }),
      member('unseen', { health: 'UNKNOWN' }),
      member('installing', { joined: false, health: null, memberSince: Date.parse('2026-09-01T00:00:00Z') }),
    ];
    expect(pickScaleDownVictims(candidates, 5).map((victim) => [victim.candidate.hostname, victim.reason])).toEqual([
      ['installing', 'NOT_JOINED'],
      ['sick', 'UNHEALTHY'],
      ['unseen', 'HEALTH_UNKNOWN'],
      ['new', 'NEWEST'],
      ['old', 'NEWEST'],
    ]);
    expect(pickScaleDownVictims(candidates, 1).map((victim) => victim.candidate.hostname)).toEqual(['installing']);
    expect(pickScaleDownVictims(candidates, 0)).toEqual([]);
  });

  it('chooses the same among equals every time, by host name', () => {
    const candidates = [member('w-b'), member('w-a'), member('w-c')];
    expect(pickScaleDownVictims(candidates, 2).map((victim) => victim.candidate.hostname)).toEqual(['w-a', 'w-b']);
    expect(pickScaleDownVictims([...candidates].reverse(), 2).map((victim) => victim.candidate.hostname)).toEqual(['w-a', 'w-b']);
  });

  it('says why in both languages', () => {
    const [victim] = pickScaleDownVictims([member('w1'), member('w2', { health: 'UNHEALTHY' })], 1);
    expect(victim.text.message).toBe('chose w2 to remove: it is unhealthy');
    expect(formatMessage('zh-CN', victim.text.code, victim.text.params)).toBe('选择移除 w2：它不健康');
  });
});
