import { describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { CLI_MESSAGES, columnTitles, fieldWords, languageOf, serverErrorText, serverText, translator } from './messages';

describe('messages', () => {
  it.each([
    [{ LANG: 'zh_CN.UTF-8' }, 'zh'],
    [{ LANG: 'zh_TW.UTF-8' }, 'zh'],
    [{ LANG: 'en_US.UTF-8' }, 'en'],
    [{ LANG: 'zh_CN.UTF-8', LC_ALL: 'C' }, 'en'],
    [{ LC_MESSAGES: 'zh_CN.UTF-8', LANG: 'en_US.UTF-8' }, 'zh'],
    [{}, 'en'],
  ])('%o speaks %s', (env, language) => {
    expect(languageOf(env)).toBe(language);
  });

  it('fills in parameters and leaves unknown ones visible', () => {
    expect(translator('en')('nodeNotFound', { node: 'h1' })).toBe('no node "h1"');
    expect(translator('zh')('nodeNotFound', { node: 'h1' })).toBe('没有节点“h1”');
    expect(translator('en')('nodeNotFound')).toBe('no node "{node}"');
  });

  it('words a row of --from-csv the API refused in Chinese: the field, then its coded problem', () => {
    const t = translator('zh');
    const taken = message('bulk.hostnameTaken', { hostname: 'w-1' });
    const problem = t('fieldProblem', { field: fieldWords('zh', 'hostname'), problem: serverText('zh', taken.message, taken.code, taken.params) });
    expect(t('csvRow', { file: 'hosts.csv', line: 4, detail: problem })).toBe('hosts.csv 第 4 行：主机名：“w-1”已是此集群的节点');
    expect(fieldWords('zh', 'credentials')).toBe('凭据');
    expect(fieldWords('en', 'row')).toBe('row');
  });

  it('has a Chinese heading for every English one', () => {
    const titles = columnTitles('zh');
    expect(Object.keys(titles)).toEqual(Object.keys(columnTitles('en')));
    expect(titles['HOSTNAME']).toBe('主机名');
  });

  it('words a field\'s problem in Chinese after the field\'s own words, not its API path; English keeps the server\'s message', () => {
    // What the API sends for a host name that is taken (FieldConflictError) and for a CSR's reason (BadUserInputError).
    const taken = message('node.hostnameTaken', { hostname: 'a-1', status: { code: 'node.statusName', params: { status: 'UNREACHABLE' } } });
    const whole = message('error.badInput', { field: 'input.hostname', problem: { code: taken.code, params: taken.params } });
    const extensions = { field: 'input.hostname', problemCode: taken.code, problemParams: taken.params, messageCode: whole.code, messageParams: whole.params };
    expect(serverErrorText('zh', whole.message, extensions)).toBe('主机名：“a-1”已是此集群的节点（无法连接）');
    expect(serverErrorText('en', whole.message, extensions)).toBe('input.hostname "a-1" is already a node of this cluster (UNREACHABLE)');
    const empty = message('csr.denyReasonEmpty');
    expect(serverErrorText('zh', `reason ${empty.message}`, { field: 'reason', problemCode: empty.code, problemParams: empty.params })).toBe('理由：不能为空：请说明拒绝此 CSR 的原因');
    // A field the CLI has no words for keeps its own last name; an error without a field is worded whole.
    expect(serverErrorText('zh', 'x', { field: 'input.rows[3].profile', problemCode: 'validation.empty', problemParams: {} })).toBe('profile：不能为空');
    const forbidden = message('csr.forceNeedsAdmin', { held: 'OPERATOR' });
    expect(serverErrorText('zh', forbidden.message, { messageCode: forbidden.code, messageParams: forbidden.params })).toBe('强制批准需要 ADMIN 角色；您的角色是 OPERATOR');
  });
});

/**
 * Latin words the CLI's Chinese may keep: names an operator types or reads as they are (the
 * product, Kubernetes objects and tools, protocols, units, roles and statuses the API names).
 */
const NAMES = new Set(
  [
    'ccos-scaler', 'CCOS', 'CSV', 'CSR', 'CSRs', 'SSH', 'IP', 'VIP', 'API', 'CPU', 'CPUs', 'GiB', 'MiB', 'TLS', 'HTTP', 'HTTPS', 'JSON', 'YAML', 'PEM', 'ID',
    'Node', 'Pod', 'Pods', 'PodDisruptionBudget', 'DaemonSet', 'kubectl', 'kubelet', 'cluster-autoscaler', 'cloud-config', 'agent',
    'ADMIN', 'OPERATOR', 'VIEWER', 'CURRENT', 'DRIFTED', 'OUTDATED', 'UNINSPECTED', 'JOINED', 'FAILED', 'SUCCEEDED', 'PENDING', 'DENIED', 'SUCCESS', 'FAILURE', 'REBOOT', 'UPGRADE', 'REAPPLY',
    'CCOS_SERVER', 'CCOS_TOKEN', 'LANG', 'plan', 'apply', 'login', 'hostname', 'ip', 'port', 'user', 'labels', 'taints', 'table', 'json', 'yaml', 'root', 'credential',
  ].map((name) => name.toLowerCase()),
);

describe('the CLI in Chinese', () => {
  it('words every message of its own in Chinese, keeping only names, flags, placeholders and commands in Latin letters', () => {
    const english: string[] = [];
    for (const [key, text] of Object.entries(CLI_MESSAGES)) {
      if (key === 'usage' || key === 'columns') {
        continue;
      }
      const words = text.zh
        .replace(/\{\w+\}/g, ' ')
        // Flags, commands after `ccos-scaler`, paths, versions and key=value examples are data.
        .replace(/ccos-scaler(?: [a-z][\w-]*)+/g, ' ')
        .replace(/(?<![\w-])-{1,2}[\w-]+/g, ' ')
        .replace(/[\w.-]*[/=:@.][\w./=:@-]*\w/g, ' ')
        .match(/[A-Za-z][\w-]*/g) ?? [];
      english.push(...words.filter((word) => !NAMES.has(word.toLowerCase())).map((word) => `${key}: ${word}`));
    }
    expect(english).toEqual([]);
  });

  it('lists every command in the Chinese usage as in the English one', () => {
    const commands = (usage: string) => [...usage.matchAll(/^ {2}([a-z]+(?: [a-z]+)?)\b/gm)].map((match) => match[1]);
    expect(commands(CLI_MESSAGES.usage.zh)).toEqual(commands(CLI_MESSAGES.usage.en));
  });
});
