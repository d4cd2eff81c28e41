import { describe, expect, it } from 'vitest';
import { buildRemoteCommand, displayCommand, PID_MARKER, takePidLine } from './remote-command';
import { scriptArgv, defineScript } from './remote-script';

describe('buildRemoteCommand', () => {
  it('reports the pid, then execs the quoted argv', () => {
    expect(buildRemoteCommand(['uname', '-m'])).toBe(`printf '${PID_MARKER}%s\\n' "$$" >&2; exec 'uname' '-m'`);
  });

  it.each([
    [{ sudo: true }, "sudo -n -- 'id' '-u'"],
    [{ env: { TOKEN: "a'b c" } }, "env 'TOKEN=a'\\''b c' 'id' '-u'"],
    [{ sudo: true, env: { A: '1', B_2: '$(x)' } }, "sudo -n -- env 'A=1' 'B_2=$(x)' 'id' '-u'"],
  ])('builds %j', (options, expected) => {
    expect(displayCommand(['id', '-u'], options)).toBe(expected);
  });

  it('refuses environment names that are not names', () => {
    expect(() => displayCommand(['id'], { env: { 'A;B': '1' } })).toThrow(/not a valid name/);
    expect(() => displayCommand(['id'], { env: { '1A': '1' } })).toThrow(/not a valid name/);
    expect(() => displayCommand(['a=b'], { env: { A: '1' } })).toThrow(/containing "="/);
  });
});

describe('scriptArgv', () => {
  it('passes values as positional parameters, never as script text', () => {
    const script = defineScript('touch-file', 'touch -- "$1"');
    expect(scriptArgv(script, ['$(id)'])).toEqual(['sh', '-c', 'touch -- "$1"', 'ccos-touch-file', '$(id)']);
    expect(() => defineScript('Bad Name', 'true')).toThrow(/kebab-case/);
  });
});

describe('takePidLine', () => {
  it.each([
    ['whole line first', `${PID_MARKER}4242\nwarning\n`, 4242, 'warning\n'],
    ['line only', `${PID_MARKER}7\n`, 7, ''],
    ['after rc-file noise', `stdin: is not a tty\n${PID_MARKER}99\nrest`, 99, 'stdin: is not a tty\nrest'],
  ])('%s', (_name, input, pid, rest) => {
    const taken = takePidLine(Buffer.from(input));
    expect(taken).toMatchObject({ pending: false, pid });
    expect(taken.pending === false && taken.rest.toString()).toBe(rest);
  });

  it('waits for the rest of a split line', () => {
    expect(takePidLine(Buffer.from(PID_MARKER.slice(0, 5)))).toEqual({ pending: true });
    expect(takePidLine(Buffer.from(`${PID_MARKER}12`))).toEqual({ pending: true });
  });

  it('gives up after 4 KiB without the line and keeps every byte', () => {
    const noise = Buffer.from(`${'x'.repeat(100)}\n`.repeat(50));
    const taken = takePidLine(noise);
    expect(taken).toMatchObject({ pending: false, pid: null });
    expect(taken.pending === false && taken.rest.equals(noise)).toBe(true);
  });
});
