import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { describe, expect, it } from 'vitest';
import { EN, type MessageCode } from './catalogue.en';
import { ZH_CN } from './catalogue.zh-cn';
import { formatMessage, formatServerText, localeOf, message } from './message';

const CODES = Object.keys(EN) as MessageCode[];

/** Codes whose Chinese is a technical name that stays as it is. */
const TECHNICAL_TERMS: ReadonlySet<MessageCode> = new Set<MessageCode>(['agent.preflight.role.api', 'agent.preflight.role.mcs']);

/** The argument names of a message and how each is used (plain, plural, select). */
function argumentsOf(elements: readonly MessageFormatElement[], found = new Map<string, string>()): Map<string, string> {
  for (const element of elements) {
    if (element.type === TYPE.argument || element.type === TYPE.number) {
      found.set(element.value, found.get(element.value) ?? 'plain');
    } else if (element.type === TYPE.plural || element.type === TYPE.select) {
      found.set(element.value, element.type === TYPE.plural ? 'plural' : 'select');
      for (const option of Object.values(element.options)) {
        argumentsOf(option.value, found);
      }
    }
  }
  return found;
}

/** The text a message shows of its own: its literals, also those inside plural and select options. */
function literalsOf(elements: readonly MessageFormatElement[]): string {
  return elements
    .map((element) =>
      element.type === TYPE.literal ? element.value : element.type === TYPE.plural || element.type === TYPE.select ? Object.values(element.options).map((option) => literalsOf(option.value)).join(' ') : ' ',
    )
    .join('');
}

describe('message catalogue', () => {
  it('has an English and a Chinese text for every code, and nothing else', () => {
    expect(Object.keys(ZH_CN).sort()).toEqual([...CODES].sort());
    for (const code of CODES) {
      expect(EN[code].trim(), code).not.toBe('');
      expect(ZH_CN[code].trim(), code).not.toBe('');
    }
  });

  it.each(CODES)('%s parses as ICU and has the same arguments in both languages', (code) => {
    const en = argumentsOf(parse(EN[code], { ignoreTag: true }));
    const zh = argumentsOf(parse(ZH_CN[code], { ignoreTag: true }));
    // Chinese has no plural forms: a plural argument may be shown as a plain number there.
    const normalise = (args: Map<string, string>) => [...args.keys()].sort();
    expect(normalise(zh)).toEqual(normalise(en));
    for (const [name, use] of en) {
      if (use === 'select') {
        expect(zh.get(name), `${code}: ${name}`).toBe('select');
      }
    }
  });

  it('the Chinese catalogue is written in Chinese wherever it has words of its own', () => {
    for (const code of CODES) {
      // Arguments, select keys, commands in backquotes and product names are not words to translate.
      const words = literalsOf(parse(ZH_CN[code], { ignoreTag: true })).replace(/`[^`]*`/g, '');
      if (/[A-Za-z]{3,}/.test(words) && !TECHNICAL_TERMS.has(code)) {
        expect(words, code).toMatch(/[\u4e00-\u9fff]/);
      }
    }
  });

  it('words the autoscaling decisions as the service always did in English, and in Chinese', () => {
    expect(formatMessage('en', 'autoscaling.outOfResources', { group: 'pool-a', spares: '1', delta: '3', missing: '2' })).toBe(
      'the pool of pool-a had 1 spare host(s) for a scale-up by 3: 2 instance(s) report out-of-resources',
    );
    expect(formatMessage('zh-CN', 'autoscaling.outOfResources', { group: 'pool-a', spares: '1', delta: '3', missing: '2' })).toBe('pool-a 的池中只有 1 台备用主机，不够扩容 3 台：2 个实例报告资源不足');
    const ended = { hostname: 'w-1', status: 'failed', reason: message('install.noReason') };
    expect(formatMessage('en', 'autoscaling.removalEnded', ended)).toBe('the removal of w-1 failed: no reason given');
    expect(formatMessage('zh-CN', 'autoscaling.removalEnded', ended)).toBe(`w-1 的移除失败：${formatMessage('zh-CN', 'install.noReason')}`);
    expect(formatMessage('en', 'autoscaling.reserved', { group: 'pool-a', delta: '2', from: '1', to: '3' })).toBe('reserved for a scale-up of pool-a by 2 (target 1 → 3)');
  });

  it('chooses the English plural form by count', () => {
    expect(formatMessage('en', 'agent.preflight.passed', { count: 1 })).toBe('all 1 preflight check passed');
    expect(formatMessage('en', 'agent.preflight.passed', { count: 13 })).toBe('all 13 preflight checks passed');
    expect(formatMessage('zh-CN', 'agent.preflight.passed', { count: 13 })).toBe('全部 13 项预检均已通过');
    expect(formatMessage('en', 'node.agentSilent', { seconds: 1, since: 'then' })).toContain('for 1 second (since then)');
  });

  it('formats nested messages and lists of messages in the same language', () => {
    const reason = message('install.stepFailed', {
      step: message('step.PREFLIGHT.title'),
      reason: message('agent.preflight.failed', { problems: [message('agent.preflight.swapOn', { devices: '/swapfile' }), message('agent.preflight.kernelOld', { release: '3.10', min: '4.18' })] }),
    });
    expect(reason.message).toBe('Preflight checks failed: preflight failed: swap is on (swapon --show lists /swapfile); kernel 3.10 is older than 4.18');
    expect(formatMessage('zh-CN', reason.code, reason.params)).toBe('预检失败：预检未通过：swap 已开启（swapon --show 列出 /swapfile）；内核 3.10 低于 4.18');
    // What the server stores is plain JSON and comes back the same.
    const stored = JSON.parse(JSON.stringify({ code: reason.code, params: reason.params })) as { code: string; params: unknown };
    expect(formatServerText('zh-CN', stored.code, stored.params, reason.message)).toBe('预检失败：预检未通过：swap 已开启（swapon --show 列出 /swapfile）；内核 3.10 低于 4.18');
  });

  it('falls back to the server text for a code it does not know', () => {
    expect(formatServerText('zh-CN', 'some.future.code', {}, 'what the server said')).toBe('what the server said');
    expect(formatServerText('zh-CN', null, null, 'plain')).toBe('plain');
  });

  it.each([
    ['zh_CN.UTF-8', 'zh-CN'],
    ['zh-CN', 'zh-CN'],
    ['zh', 'zh-CN'],
    ['en_US.UTF-8', 'en'],
    ['C', 'en'],
    [undefined, 'en'],
  ] as const)('reads the locale %s as %s', (value, locale) => {
    expect(localeOf(value)).toBe(locale);
  });
});
