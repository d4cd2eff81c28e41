import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import type { LabDescription } from '@ccos/tools/lab';

/** A lab owned by another process (test/lab/fixtures/start-lab-and-wait.ts). */
export interface LabProcess {
  readonly lab: LabDescription;
  readonly pid: number;
  /** SIGTERM: the owner stops its lab and exits; resolves once it has. */
  stop(): Promise<void>;
  /** SIGKILL: the owner dies and leaves its lab behind; resolves once it is gone. */
  kill(): Promise<void>;
}

/** Starts a lab in a child process and resolves once it is up. */
export function startLabProcess(hosts: number, name: string): Promise<LabProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/lab/fixtures/start-lab-and-wait.ts', String(hosts), name], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = /^up (\{.*\})$/m.exec(output)?.[1];
      if (line !== undefined) {
        output = '';
        resolve({
          lab: JSON.parse(line) as LabDescription,
          pid: child.pid ?? 0,
          stop: async () => {
            child.kill('SIGTERM');
            await exited;
          },
          kill: async () => {
            child.kill('SIGKILL');
            await exited;
          },
        });
      }
    });
    void exited.then(() => reject(new Error(`the lab process exited before its lab was up:\n${output}`)));
    child.on('error', reject);
  });
}

/**
 * What of a lab is on the machine: network namespaces, its bridge and veth ends, its folder,
 * mounts under it, processes in its hosts' network namespaces (given by inode, as read while
 * the lab was up). Another lab may have its slice and addresses by now, so they are not traces.
 */
export function labTraces(lab: LabDescription, namespaceInodes: readonly string[] = []): string[] {
  const traces: string[] = [];
  const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  traces.push(...netns.split('\n').filter((line) => line.startsWith(lab.namePrefix)).map((line) => `netns ${line.split(' ')[0] ?? ''}`));
  const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
  traces.push(...links.split('\n').map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1] ?? '')
    .filter((link) => link === lab.bridge || link.startsWith(lab.namePrefix)).map((link) => `link ${link}`));
  if (existsSync(lab.stateDir)) {
    traces.push(`folder ${lab.stateDir}`);
  }
  if (readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${lab.stateDir}/`)) {
    traces.push(`mounts under ${lab.stateDir}`);
  }
  const pids = processesIn(namespaceInodes, lab.namePrefix);
  if (pids.length > 0) {
    traces.push(`processes ${pids.join(',')}`);
  }
  return traces;
}

/** The network namespace inodes of a lab's hosts (to find their processes later). */
export function netnsInodes(lab: LabDescription): string[] {
  return lab.hosts.map((host) => execFileSync('stat', ['-L', '-c', '%i', `/run/netns/${host.netns}`], { encoding: 'utf8' }).trim());
}

function processesIn(inodes: readonly string[], ownPrefix: string): number[] {
  // A namespace that is gone frees its inode number, which a new one (another lab's) may get.
  const reused = new Set(readdirSync('/run/netns').filter((name) => !name.startsWith(ownPrefix)).map((name) => {
    try {
      return String(statSync(`/run/netns/${name}`).ino);
    } catch {
      return '';
    }
  }));
  const wanted = new Set(inodes.filter((inode) => !reused.has(inode)));
  if (wanted.size === 0) {
    return [];
  }
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).flatMap((entry) => {
    try {
      const ino = /\[(\d+)\]/.exec(readlinkSync(`/proc/${entry}/ns/net`))?.[1];
      return ino !== undefined && wanted.has(ino) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}
