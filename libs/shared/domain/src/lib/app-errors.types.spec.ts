import { describe, expect, it } from 'vitest';
import { formatMessage, message } from '@ccos/shared/messages';
import { AppError, BadUserInputError, ConflictError, PreconditionError, UnauthenticatedError } from './app-errors';
import { type TransitionResult, transition } from './node-lifecycle';

/**
 * A type-level test: each `@ts-expect-error` below is a bare string where coded text is required.
 * The project's typecheck (`tsc -p libs/shared/domain/tsconfig.json`, which includes specs) fails
 * with "Unused '@ts-expect-error' directive" the day one of these places accepts English again,
 * and a Chinese page would show it (issues 28 and 31).
 */
describe('coded text only', () => {
  it('refuses a bare string where an error takes its message', () => {
    // @ts-expect-error AppError takes a coded message, not English
    expect(() => new AppError('CONFLICT', 'node w1 is busy')).toBeDefined();
    // @ts-expect-error PreconditionError takes a coded message, not English
    expect(() => new PreconditionError('node w1 is INSTALLING')).toBeDefined();
    // @ts-expect-error ConflictError takes a coded message, not English
    expect(() => new ConflictError('a removal of w1 is already running')).toBeDefined();
    // @ts-expect-error UnauthenticatedError takes a coded message, not English
    expect(() => new UnauthenticatedError('sign in first')).toBeDefined();
    // @ts-expect-error BadUserInputError takes a coded problem, not English
    expect(() => new BadUserInputError('input.name', 'must not be empty')).toBeDefined();
  });

  it('gives every error its code and parameters beside the English text', () => {
    const error = new PreconditionError(message('removal.notRunning', { node: 'w1' }), { status: 'JOINED' });
    expect(error.message).toBe('no removal of w1 is running');
    expect(error.extensions).toEqual({ status: 'JOINED', messageCode: 'removal.notRunning', messageParams: { node: 'w1' }, code: 'FAILED_PRECONDITION' });
  });

  it('words a refused transition as a coded message', () => {
    const refused = transition('READY_TO_INSTALL', 'REMOVAL_STARTED');
    const reason: Extract<TransitionResult, { ok: false }>['reason'] = refused.ok ? message('install.noReason') : refused.reason;
    // @ts-expect-error a transition's refusal is coded text, not a string
    const english: string = reason;
    expect(typeof english).toBe('object');
    expect(reason.code).toBe('node.transitionRefused');
    expect(formatMessage('zh-CN', reason.code, reason.params)).toBe('节点状态为 待安装 时不能开始移除；需要以下状态之一：已加入；驱逐失败');
  });
});
