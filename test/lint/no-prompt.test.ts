import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * `npm start` and `npm test` run Nx; on a terminal, Nx asks once whether to share usage data and
 * waits for the answer (then edits the tracked nx.json) unless nx.json already says. A newcomer's
 * first start must not stop at a question: run Nx on a pseudo-terminal, outside CI, with the
 * terminal's input left open, and expect it to finish on its own without asking.
 */
describe('the two commands ask nothing on a terminal', () => {
  it('Nx runs to the end on a pseudo-terminal without a prompt', async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(CI|CONTINUOUS_INTEGRATION|BUILD_NUMBER|RUN_ID|GITHUB_ACTIONS|GITLAB_CI|NX_NO_CLOUD)$/.test(name)));
    const child = spawn('script', ['-qec', 'npx nx show projects --json', '/dev/null'], {
      env: { ...env, NX_DAEMON: 'false', NX_TUI: 'false', TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('exit', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    child.stdin.end();
    expect(output).not.toMatch(/usage data|\?\s*›|\(Y\/n\)/i);
    expect(code, output.slice(-2000)).toBe(0);
    expect(output).toContain('"api"');
  }, 150_000);
});
