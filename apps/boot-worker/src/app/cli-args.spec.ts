import { describe, expect, it } from 'vitest';
import { parseCli } from './cli-args';

describe('parseCli', () => {
  it.each([
    [['start', '--config', '/opt/ccos-scaler/runs/r/config.json'], { command: 'start', config: '/opt/ccos-scaler/runs/r/config.json' }],
    [['run', '--config=/c.json'], { command: 'run', config: '/c.json' }],
    [['stop', '--config', '/c.json'], { command: 'stop', config: '/c.json', graceSeconds: 30 }],
    [['stop', '--config', '/c.json', '--grace', '5'], { command: 'stop', config: '/c.json', graceSeconds: 5 }],
    [['version'], { command: 'version', json: false }],
    [['version', '--json'], { command: 'version', json: true }],
    [['--version'], { command: 'version', json: false }],
    [['help'], { command: 'help' }],
  ])('%j', (argv, parsed) => {
    expect(parseCli(argv)).toEqual(parsed);
  });

  it.each([
    [[], 'no command given'],
    [['install'], 'unknown command "install"'],
    [['start'], 'start needs --config FILE'],
    [['start', '--config'], '--config needs a value'],
    [['run', '--config', 'x', 'extra'], 'unexpected argument "extra"'],
    [['start', '--config', 'x', '--grace', '3'], 'start does not take --grace'],
    [['stop', '--config', 'x', '--grace', 'soon'], '--grace must be a number'],
  ])('refuses %j', (argv, error) => {
    expect(parseCli(argv)).toEqual({ error: expect.stringContaining(error) });
  });
});
