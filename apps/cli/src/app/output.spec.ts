import { describe, expect, it } from 'vitest';
import { progressBar, table } from './output';

describe('table', () => {
  it('pads columns to the widest cell, CJK characters counting two', () => {
    expect(table(['主机名', 'IP'], [['h1', '10.0.0.1'], ['worker-22', null]]).split('\n')).toEqual(['主机名     IP', 'h1         10.0.0.1', 'worker-22']);
  });
});

describe('progressBar', () => {
  it.each([
    ['PREFLIGHT', 'SUCCEEDED', null, 'PREFLIGHT          [########] 100% SUCCEEDED'],
    ['DOWNLOAD_BINARIES', 'RUNNING', 50, 'DOWNLOAD_BINARIES  [####----]  50% RUNNING'],
    ['START_KUBELET', 'PENDING', null, 'START_KUBELET      [--------]   0% PENDING'],
  ])('%s %s', (label, state, percent, expected) => {
    expect(progressBar(label, state, percent, 8)).toBe(expected);
  });
});
