import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { E2E_ADMIN_PASSWORD } from '../support/api-process';
import { type Run, runCli } from '../support/cli-process';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * The built `ccos-scaler` executable against the real world: the built API, kube-sim and a lab
 * host running sshd. It signs in, adds the host from a CSV file (a file with bad rows adds
 * nothing and names them; the corrected file adds all, and again adds nothing), deletes the
 * records of hosts whose add failed, installs the host and follows it to JOINED while the test
 * approves its CSRs with the CLI, and removes it after the preview; JSON
 * output is parsed, exit codes checked for a wrong password, an unknown node and bad flags, and
 * the words in Chinese under LANG=zh_CN.UTF-8. Needs `npx nx run-many -t build -p api cli boot-worker`.
 */
let world: ScaleOutWorld;
let home = '';
let passwordFile = '';
let hostPasswordFile = '';
let hostname = '';

function cli(args: readonly string[], options: { env?: Record<string, string>; input?: string; onStdout?: (chunk: string) => void } = {}): Promise<Run> {
  return runCli(args, { ...options, env: { HOME: home, LANG: 'en_US.UTF-8', CCOS_SERVER: `http://127.0.0.1:${world.api.port}`, ...options.env } });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function jsonLines<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as T);
}

describe('ccos-scaler CLI', () => {
  beforeAll(async () => {
    world = await startScaleOutWorld({ hosts: 1, name: 'cli-test' });
    home = await mkdtemp(join(tmpdir(), 'ccos-cli-home-'));
    passwordFile = join(home, 'admin-password');
    await writeFile(passwordFile, `${E2E_ADMIN_PASSWORD}\n`, { mode: 0o600 });
    hostPasswordFile = join(home, 'host-password');
    await writeFile(hostPasswordFile, world.lab.hosts[0].password, { mode: 0o600 });
    hostname = world.lab.hosts[0].hostname;
    // The CLI's requests do not pass through the test's ledger: name the host's password to it, so
    // the API process's stop() fails if the password shows up in its log, a response or the audit.
    world.api.secrets.noteSecret(world.lab.hosts[0].password, 'lab host SSH password (sent by the CLI)');
    // Another worker in the cluster, so the host is not the last one when it is removed.
    world.sim.api.seed(world.sim.resource('nodes'), {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'spare', labels: { 'node-role.kubernetes.io/worker': '' } },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
  }, 600_000);

  afterAll(async () => {
    await world?.stop();
    if (home) {
      await rm(home, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses bad usage with exit 2 before sending anything, and never takes a password as a flag', async () => {
    const unknownFlag = await cli(['nodes', 'list', '--colour']);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toMatch(/usage error: .*--colour/);
    expect((await cli(['nodes', 'frobnicate'])).code).toBe(2);
    expect((await cli(['nodes', 'list', '--output', 'xml'])).code).toBe(2);
    const passwordFlag = await cli(['nodes', 'add', '--hostname', 'h9', '--ip', '198.18.0.99', '--password', 'hunter2']);
    expect(passwordFlag.code).toBe(2);
    expect(passwordFlag.stdout + passwordFlag.stderr).not.toContain('hunter2');
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit codes: 0 ok, 1 operation failed, 2 usage error, 3 authentication failed, 4 not found, 5 plan: something would change.');
  });

  it('says who is not signed in (exit 3), refuses a wrong password (exit 3), and keeps the token of a good one in a 0600 file', async () => {
    const anonymous = await cli(['clusters', 'list']);
    expect(anonymous.code).toBe(3);
    const wrong = await cli(['login', '--password-stdin'], { input: 'not-the-password\n' });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('authentication failed: wrong user name or password');

    const good = await cli(['login', '--username', 'admin', '--password-file', passwordFile, '--output', 'json']);
    expect(good.code).toBe(0);
    const answer = JSON.parse(good.stdout) as { username: string; role: string; sessionFile: string };
    expect(answer).toMatchObject({ username: 'admin', role: 'ADMIN', sessionFile: join(home, '.config', 'ccos-scaler', 'session.json') });
    const stored = JSON.parse(await readFile(answer.sessionFile, 'utf8')) as { token: string };
    expect(good.stdout).not.toContain(stored.token);
    expect((await stat(answer.sessionFile)).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, '.config', 'ccos-scaler'))).mode & 0o777).toBe(0o700);
    // CCOS_TOKEN works without the file.
    const byEnv = await cli(['clusters', 'list', '--output', 'json'], { env: { HOME: await mkdtemp(join(tmpdir(), 'ccos-cli-empty-')), CCOS_TOKEN: stored.token } });
    expect(byEnv.code).toBe(0);
    expect((JSON.parse(byEnv.stdout) as Array<{ id: string }>).map((cluster) => cluster.id)).toEqual([world.clusterId]);
  });

  it('adds from a CSV file only when every row passes: a bad row adds nothing and is named; the corrected file adds all; run again, it adds nothing and says so', async () => {
    const host = world.lab.hosts[0];
    // Two addresses of the lab that no host has: their nodes end UNREACHABLE, for nodes delete below.
    const [firstGhostIp = '', secondGhostIp = ''] = world.lab.unassignedIps;
    const rows = ['hostname,ip,port,user', `${host.hostname},${host.ip},${host.port},${host.user}`, `ghost-1,${firstGhostIp}`];
    const badCsv = join(home, 'bad.csv');
    // Line 4 has two problems; line 5 repeats line 3, which makes both lines wrong.
    await writeFile(badCsv, [...rows, `Ghost_2!,${secondGhostIp},70000`, `ghost-1,${firstGhostIp}`, ''].join('\n'));
    const refused = await cli(['nodes', 'add', '--from-csv', badCsv, '--password-file', hostPasswordFile]);
    expect(refused.code).toBe(1);
    // Every problem at once, each on its line of the file; then what happened (nothing).
    expect(refused.stderr.trim().split('\n')).toEqual([
      `${badCsv} line 3: host name: "ghost-1" is also on line 5 of this list`,
      `${badCsv} line 3: IP address: ${firstGhostIp} is also on line 5 of this list`,
      `${badCsv} line 4: host name: "Ghost_2!" is not a valid RFC 1123 label (lower-case letters, digits and '-', 1–63 characters, starting and ending with a letter or digit)`,
      `${badCsv} line 4: SSH port: 70000 is not a TCP port (1–65535)`,
      `${badCsv} line 5: host name: "ghost-1" is also on line 3 of this list`,
      `${badCsv} line 5: IP address: ${firstGhostIp} is also on line 3 of this list`,
      `Nothing added: 3 row(s) of ${badCsv} have problems. Fix them and run the file again, or pass --partial to add the other rows.`,
    ]);
    expect(refused.stdout).toBe('');
    // The nodes added here (the cluster also has the worker "spare", found in it).
    const addedNodes = async () => (JSON.parse((await cli(['nodes', 'list', '--output', 'json'])).stdout) as Array<{ hostname: string; status: string; origin: string }>).filter((node) => node.origin === 'ADDED');
    const listNames = async () => (await addedNodes()).map((node) => node.hostname);
    expect(await listNames()).toEqual([]);

    const csv = join(home, 'hosts.csv');
    await writeFile(csv, [...rows, `ghost-2,${secondGhostIp}`, ''].join('\n'));
    const added = await cli(['nodes', 'add', '--from-csv', csv, '--password-file', hostPasswordFile, '--output', 'json']);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const result = JSON.parse(added.stdout) as { added: Array<{ id: string; hostname: string; ip: string }>; skipped: unknown[]; refused: unknown[] };
    expect(result.added.map((node) => [node.hostname, node.ip]).sort()).toEqual([[host.hostname, host.ip], ['ghost-1', firstGhostIp], ['ghost-2', secondGhostIp]].sort());
    expect(result).toMatchObject({ skipped: [], refused: [] });
    expect(added.stdout).not.toContain(host.password);

    // The same file again: every host is there under the same name and address, so no add is asked for.
    const again = await cli(['nodes', 'add', '--from-csv', csv, '--password-file', hostPasswordFile]);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    const ids = Object.fromEntries(result.added.map((node) => [node.hostname, node.id]));
    // The node's status at the time is shown as it is (ADDING, READY_TO_INSTALL or UNREACHABLE by now).
    const skipped = (line: number, name: string, ip: string) => expect.stringMatching(new RegExp(`^${escapeRegExp(`${csv} line ${line}: ${name} (${ip}) already added as node ${ids[name]} (`)}[A-Z_]+\\), skipped$`));
    expect(again.stdout.trim().split('\n')).toEqual([
      skipped(2, host.hostname, host.ip),
      skipped(3, 'ghost-1', firstGhostIp),
      skipped(4, 'ghost-2', secondGhostIp),
      `Nothing to add: all 3 host(s) of ${csv} are already added.`,
    ]);
    const chinese = await cli(['nodes', 'add', '--from-csv', csv, '--password-file', hostPasswordFile], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(chinese.code).toBe(0);
    expect(chinese.stdout).toContain(`${csv} 第 2 行：${host.hostname}（${host.ip}）已录入为节点 ${ids[host.hostname]}`);
    expect(chinese.stdout.trim().split('\n').at(-1)).toBe(`无需录入：${csv} 中的 3 台主机均已录入。`);
    expect((await listNames()).sort()).toEqual([host.hostname, 'ghost-1', 'ghost-2'].sort());

    // The lab host passes its checks; the others have nobody at their address.
    const statuses = async () => Object.fromEntries((await addedNodes()).map((node) => [node.hostname, node.status]));
    await expect.poll(statuses, { timeout: 120_000, interval: 500 }).toEqual({ [host.hostname]: 'READY_TO_INSTALL', 'ghost-1': 'UNREACHABLE', 'ghost-2': 'UNREACHABLE' });

    const empty = join(home, 'empty.csv');
    await writeFile(empty, 'hostname,ip\n');
    expect((await cli(['nodes', 'add', '--from-csv', empty, '--password-file', hostPasswordFile])).code).toBe(2);
  }, 300_000);

  it('lists the batch the CSV file added and shows each of its hosts, in English and in Chinese; retry says when nothing failed', async () => {
    const listed = await cli(['batches', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    const [header, ...rows] = listed.stdout.trim().split('\n').map((line) => line.trim().split(/\s{2,}/));
    expect(header).toEqual(['ID', 'STATUS', 'HOSTS', 'JOINED', 'FAILED', 'REQUESTER', 'AT']);
    expect(rows).toHaveLength(1);
    const [batchId = '', state, hosts, joined, failed, requester] = rows[0] ?? [];
    expect([state, hosts, joined, failed, requester]).toEqual(['ADDED', '3', '0', '0', 'admin']);

    const shown = await cli(['batches', 'show', batchId.slice(0, 8)]);
    expect(shown.code, shown.stderr).toBe(0);
    const [summary, , ...hostLines] = shown.stdout.trim().split('\n');
    expect(summary).toBe(`Batch ${batchId} (ADDED): 3 host(s): 0 joined, 0 installing, 0 queued, 0 failed, 0 cancelled, 0 waiting for an operator.`);
    const byHost = Object.fromEntries(hostLines.map((line) => line.trim().split(/\s{2,}/)).map(([hostname = '', ...rest]) => [hostname, rest]));
    expect(byHost[world.lab.hosts[0].hostname]?.slice(0, 3)).toEqual([world.lab.hosts[0].ip, 'ADDED', 'READY_TO_INSTALL']);
    expect(byHost['ghost-1']?.[2]).toBe('UNREACHABLE');
    expect(byHost['ghost-1']?.at(-1)).toMatch(/\S/);
    const chinese = await cli(['batches', 'show', batchId], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(chinese.stdout.split('\n')[0]).toBe(`批次 ${batchId}（ADDED）：共 3 台主机：已加入 0，安装中 0，排队 0，失败 0，已取消 0，等待操作员 0。`);
    expect(chinese.stdout.split('\n')[1]).toMatch(/^主机名\s+地址\s+阶段\s+状态\s+步骤\s+原因$/);

    const retried = await cli(['batches', 'retry', batchId]);
    expect(retried.code).toBe(1);
    expect(retried.stderr.trim()).toBe('the service refused: no host of this batch has failed');
    expect((await cli(['batches', 'show', 'ffffffff'])).code).toBe(4);
  });

  it('deletes the record of a node whose add failed, after asking, and takes new credentials for another without printing them', async () => {
    const asked = await cli(['nodes', 'delete', 'ghost-1']);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain('not on a terminal: pass --yes to delete the record without asking');
    const deleted = await cli(['nodes', 'delete', 'ghost-1', '--yes', '--output', 'json']);
    expect(deleted.stderr).toBe('');
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toMatchObject({ hostname: 'ghost-1', clusterId: world.clusterId });
    const names = (JSON.parse((await cli(['nodes', 'list', '--output', 'json'])).stdout) as Array<{ hostname: string }>).map((node) => node.hostname);
    expect(names).not.toContain('ghost-1');
    expect((await cli(['nodes', 'delete', 'ghost-1', '--yes'])).code).toBe(4);

    const newPassword = 'ghost-2-new-password';
    world.api.secrets.noteSecret(newPassword, 'a password the CLI sends with nodes credentials');
    const changed = await cli(['nodes', 'credentials', 'ghost-2', '--user', 'core', '--password-stdin', '--wait', '--output', 'json'], { input: `${newPassword}\n` });
    expect(changed.stdout + changed.stderr).not.toContain(newPassword);
    // Connected again with the new credentials: still nobody at the address.
    expect(changed.code).toBe(1);
    expect(JSON.parse(changed.stdout)).toMatchObject({ hostname: 'ghost-2', sshUser: 'core', status: 'UNREACHABLE' });

    const gone = await cli(['nodes', 'delete', 'ghost-2', '--yes'], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(gone.code).toBe(0);
    expect(gone.stdout.trim()).toMatch(/^已删除 ghost-2 的记录（节点 \S+）；主机上的内容未改变。$/);
  }, 120_000);

  it('says exit 4 for a node that does not exist, in English and in Chinese', async () => {
    const english = await cli(['nodes', 'install', 'no-such-node', '--watch']);
    expect(english.code).toBe(4);
    expect(english.stderr.trim()).toBe('no node "no-such-node"');
    const chinese = await cli(['nodes', 'remove', 'no-such-node', '--yes'], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(chinese.code).toBe(4);
    expect(chinese.stderr.trim()).toBe('没有节点“no-such-node”');
  });

  it("lists the cluster's pools with their bounds and sizes, in English and in Chinese", async () => {
    const created = await world.gql('mutation($input: CreateNodeGroupInput!) { createNodeGroup(input: $input) { id } }', {
      input: { clusterId: world.clusterId, name: 'web-pool', minSize: 0, maxSize: 3, profile: { cpuCores: 2, memoryBytes: 4 * 1024 ** 3 } },
    });
    expect(created.errors).toBeUndefined();
    const english = await cli(['pools', 'list']);
    expect(english.code).toBe(0);
    expect(english.stdout.trim().split('\n').map((line) => line.trim().split(/\s+/))).toEqual([
      ['NAME', 'MIN', 'MAX', 'DESIRED', 'CURRENT', 'SPARES'],
      ['web-pool', '0', '3', '0', '0', '0'],
    ]);
    const chinese = await cli(['pools', 'list'], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(chinese.stdout.split('\n')[0]).toMatch(/^名称\s+最小\s+最大\s+期望\s+当前\s+备用$/);
    const json = await cli(['pools', 'list', '--output', 'json']);
    expect(JSON.parse(json.stdout)).toMatchObject([{ name: 'web-pool', minSize: 0, maxSize: 3, hosts: [] }]);
  });

  it('installs the host and follows installProgress to JOINED while its CSRs are approved with the CLI', async () => {
    const approved: string[] = [];
    let installing = true;
    const approving = (async () => {
      while (installing) {
        const pending = await cli(['csrs', 'list', '--pending', '--output', 'json']);
        for (const csr of JSON.parse(pending.stdout || '[]') as Array<{ name: string; node: { hostname: string } | null }>) {
          const approval = await cli(['csrs', 'approve', csr.name]);
          if (approval.code === 0) {
            approved.push(csr.name);
          }
        }
        await new Promise((wake) => setTimeout(wake, 500));
      }
    })();
    const install = await cli(['nodes', 'install', hostname, '--watch', '--output', 'json']);
    installing = false;
    await approving;
    expect(install.stderr).toBe('');
    expect(install.code).toBe(0);
    const messages = jsonLines<{ run: { status: string }; events: Array<{ seq: number; step: string }> }>(install.stdout);
    expect(messages.at(-1)?.run.status).toBe('SUCCEEDED');
    expect(new Set(messages.flatMap((message) => message.events.map((event) => event.step)))).toEqual(
      new Set(['PREFLIGHT', 'DOWNLOAD_BINARIES', 'INSTALL_PACKAGES', 'INSTALL_SERVICES', 'APPLY_IGNITION', 'START_KUBELET']),
    );
    expect(approved.length).toBeGreaterThanOrEqual(1);

    const listed = await cli(['nodes', 'list', '--output', 'json']);
    expect((JSON.parse(listed.stdout) as Array<{ hostname: string; status: string }>).find((node) => node.hostname === hostname)?.status).toBe('JOINED');
    const decided = await cli(['csrs', 'list', '--output', 'json']);
    const csrs = JSON.parse(decided.stdout) as Array<{ name: string; status: string; decidedBy: string | null }>;
    expect(csrs.filter((csr) => approved.includes(csr.name)).every((csr) => csr.status === 'APPROVED' || csr.status === 'ISSUED')).toBe(true);
    expect((await cli(['csrs', 'approve', 'csr-does-not-exist'])).code).toBe(4);
  }, 600_000);

  it('shows the node list and the removal preview in Chinese under LANG=zh_CN.UTF-8', async () => {
    const list = await cli(['nodes', 'list'], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+主机名\s+地址\s+状态\s+原因$/);
    expect(list.stdout).toContain(hostname);
    // The status reason is the server's, by its message code, from the catalogue the console uses too.
    expect(list.stdout).toContain('该 Node 在集群中已就绪（Ready）');
    // Not on a terminal and no --yes: the preview, then a usage error, and nothing removed.
    const asked = await cli(['nodes', 'remove', hostname], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(asked.code).toBe(2);
    expect(asked.stdout).toContain(`移除 ${hostname} 将会：`);
    expect(asked.stderr).toContain('不在终端上：请加 --yes 以不经确认直接移除');
    // Following the finished install in table form, not on a terminal: a line per event, then the verdict in Chinese.
    const watched = await cli(['nodes', 'watch', hostname], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(watched.code).toBe(0);
    expect(watched.stdout.trim().split('\n').at(-1)).toBe(`${hostname} 已加入集群（JOINED）。`);
    // The agent's step messages, by their codes: Chinese, with the data (paths, names) as it is.
    expect(watched.stdout).toMatch(/全部 \d+ 项预检均已通过/);
    expect(watched.stdout).toContain('预检：已开始');
  });

  it('inspects what the joined host runs: CURRENT (exit 0); a unit edited by hand names the file, in English and in Chinese (exit 1)', async () => {
    const current = await cli(['nodes', 'inspect', hostname]);
    expect(current.stderr).toBe('');
    expect(current.code).toBe(0);
    expect(current.stdout).toMatch(new RegExp(`^${hostname}: CURRENT: each of the \\d+ files its install wrote is as it was written`));
    const kernel = (await world.lab.exec(hostname, ['uname', '-r'])).stdout.trim();
    const kubelet = /v\d+\.\d+\.\d+\S*/.exec((await world.lab.exec(hostname, ['/usr/local/bin/kubelet', '--version'])).stdout)?.[0];
    expect(kubelet).toBeDefined();
    expect(current.stdout).toContain(`\nAt install: kernel ${kernel}, kubelet ${kubelet} started with `);
    const unit = '/etc/systemd/system/ccos-node-init.service';
    await world.lab.exec(hostname, ['sh', '-c', `echo '# edited by hand' >> ${unit}`]);
    try {
      const drifted = await cli(['nodes', 'inspect', hostname], { env: { LANG: 'zh_CN.UTF-8' } });
      expect(drifted.code).toBe(1);
      expect(drifted.stdout.split('\n')[0]).toBe(`${hostname}：DRIFTED：安装写入的文件在主机上被修改或删除（重新安装该节点即可恢复）：`);
      expect(drifted.stdout.split('\n')[1]).toMatch(new RegExp(`^  已修改  ${unit}（记录为 [0-9a-f]{12}…，现为 [0-9a-f]{12}…）$`));
      const json = JSON.parse((await cli(['nodes', 'inspect', hostname, '--output', 'json'])).stdout) as { state: string; drift: Array<{ path: string }> };
      expect(json).toMatchObject({ state: 'DRIFTED', drift: [{ path: unit }] });
    } finally {
      await world.lab.exec(hostname, ['sed', '-i', '$d', unit]);
    }
    expect((await cli(['nodes', 'inspect', hostname])).code).toBe(0);
  });

  it('removes the host after the preview and follows removalProgress to the end', async () => {
    // A joined node's record is not deleted: the API says to remove it instead.
    const deleteJoined = await cli(['nodes', 'delete', hostname, '--yes']);
    expect(deleteJoined.code).toBe(1);
    expect(deleteJoined.stderr).toContain(`node ${hostname} has joined the cluster: remove it (removeNode) instead of deleting its record`);
    const removed = await cli(['nodes', 'remove', hostname, '--yes', '--output', 'json']);
    expect(removed.stderr).toBe('');
    expect(removed.code).toBe(0);
    const [first, ...rest] = jsonLines<{
      preview?: { allowed: boolean; nodeName: string; safety: unknown[] };
      run?: { status: string; nodeStatus: string };
      events?: Array<{ kind: string; phase: string }>;
    }>(removed.stdout);
    expect(first?.preview).toMatchObject({ allowed: true, nodeName: hostname });
    expect(rest.at(-1)?.run).toMatchObject({ status: 'SUCCEEDED', nodeStatus: 'REMOVED' });
    // Each event with the phase it happened in, not the run's phase when it was printed.
    const phaseOf = new Map(rest.flatMap((line) => line.events ?? []).map((event) => [event.kind, event.phase]));
    const kubelet = phaseOf.get('KUBELET_STOPPED') ?? phaseOf.get('KUBELET_NOT_STOPPED');
    // The CLI stops at the run's final status, which is announced with the run's closing event: the log is whole.
    expect([phaseOf.get('STARTED'), phaseOf.get('DRAIN_FINISHED'), kubelet, phaseOf.get('NODE_DELETED'), phaseOf.get('TOKENS_REVOKED'), phaseOf.get('FINISHED')]).toEqual([
      'DRAIN', 'DRAIN', 'STOP_KUBELET', 'DELETE_NODE', 'REVOKE_TOKENS', 'DONE',
    ]);
    const listed = await cli(['nodes', 'list', '--output', 'json']);
    expect((JSON.parse(listed.stdout) as Array<{ hostname: string; status: string }>).find((node) => node.hostname === hostname)?.status).toBe('REMOVED');
  }, 300_000);
});
