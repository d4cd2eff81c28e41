import { describe, expect, it } from 'vitest';
import {
  normaliseUnitName,
  parseEnvironmentFile,
  parseExecLine,
  parseTimeSpan,
  parseUnit,
  serviceDefinition,
} from './unit-file';

const KUBELET = `[Unit]
Description=Kubernetes Kubelet
# a comment
[Service]
EnvironmentFile=-/etc/sysconfig/kubelet
Environment="KUBELET_LOG_LEVEL=2" "A=two words"
ExecStart=/usr/local/bin/kubelet \\
    --config=/etc/kubernetes/kubelet.conf \\
    --v=\${KUBELET_LOG_LEVEL} \\
    $KUBELET_EXTRA_ARGS
Restart=always
RestartSec=10

[Install]
WantedBy=multi-user.target
`;

describe('unit files', () => {
  it('joins continued lines and reads service settings', () => {
    const definition = serviceDefinition({ name: 'kubelet.service', fragment: { path: '/etc/systemd/system/kubelet.service', text: KUBELET }, dropins: [] });
    expect(definition).toMatchObject({
      description: 'Kubernetes Kubelet',
      type: 'simple',
      restart: 'always',
      restartSec: 10,
      wantedBy: ['multi-user.target'],
      environment: { KUBELET_LOG_LEVEL: '2', A: 'two words' },
      environmentFiles: [{ path: '/etc/sysconfig/kubelet', optional: true }],
    });
    expect(definition.execStart).toHaveLength(1);
  });

  it('lets a drop-in reset ExecStart with an empty assignment', () => {
    const settings = parseUnit([
      { path: 'a', text: '[Service]\nExecStart=/bin/a\n' },
      { path: 'b', text: '[Service]\nExecStart=\nExecStart=/bin/b --flag\n' },
    ]);
    expect(settings.get('Service')?.get('ExecStart')).toEqual(['/bin/b --flag']);
  });

  it('expands ${VAR} inside words and splits $VAR into words', () => {
    const command = parseExecLine('-/usr/local/bin/kubelet --v=${LEVEL} $EXTRA "quoted $EXTRA" --unit=%n', {
      LEVEL: '2',
      EXTRA: '--node-labels=a=b   --register-with-taints=x=y:NoSchedule',
    }, 'kubelet.service');
    expect(command.ignoreFailure).toBe(true);
    expect(command.argv).toEqual([
      '/usr/local/bin/kubelet', '--v=2', '--node-labels=a=b', '--register-with-taints=x=y:NoSchedule', 'quoted $EXTRA', '--unit=kubelet.service',
    ]);
    expect(parseExecLine('/bin/x $UNSET', {}).argv).toEqual(['/bin/x']);
  });

  it('reads environment files and time spans', () => {
    expect(parseEnvironmentFile('# c\nKUBELET_EXTRA_ARGS="--node-labels=a=b --v=4"\nexport B=1\n')).toEqual({
      KUBELET_EXTRA_ARGS: '--node-labels=a=b --v=4',
      B: '1',
    });
    expect(parseTimeSpan('1min 30s')).toBe(90);
    expect(parseTimeSpan('100ms')).toBeCloseTo(0.1);
    expect(normaliseUnitName('kubelet')).toBe('kubelet.service');
    expect(normaliseUnitName('multi-user.target')).toBe('multi-user.target');
  });
});
