import 'reflect-metadata';
import { graphql, specifiedDirectives } from 'graphql';
import pino from 'pino';
import { Arg, Ctx, Field, ID, InputType, Mutation, Query, Resolver, buildSchema } from 'type-graphql';
import { describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { type AuditEntry, type AuditResult, type AuditTrail, createAuditMiddleware, targetOf } from './audit-middleware';
import type { RequestContext } from './context';
import { BadUserInputError } from './errors';
import { createInputGuard } from './input-guard';
import { INPUT_MARK_DIRECTIVES, Secret } from './input-marks';
import { createInProcessEventBus } from './pubsub';

/** An audit trail in memory that can be told to refuse writes, as a full or broken database would. */
class MemoryTrail implements AuditTrail {
  readonly entries: Array<AuditEntry & { id: string }> = [];
  refuseWrites = false;

  async record(entry: AuditEntry): Promise<void> {
    this.entries.push({ ...entry, id: String(this.entries.length + 1) });
  }

  async begin(entry: Omit<AuditEntry, 'result'>): Promise<string> {
    if (this.refuseWrites) {
      throw new Error('could not extend file: No space left on device');
    }
    const id = String(this.entries.length + 1);
    this.entries.push({ ...entry, result: 'PENDING', id });
    return id;
  }

  async complete(id: string, result: Exclude<AuditResult, 'PENDING'>, extra: Record<string, unknown>): Promise<void> {
    const entry = this.entries.find((candidate) => candidate.id === id);
    if (entry) {
      entry.result = result;
      entry.detail = { ...entry.detail, ...extra };
    }
  }
}

@InputType()
class KeyInput {
  @Field(() => String)
  name!: string;

  @Field(() => String)
  @Secret()
  privateKey!: string;
}

const done: string[] = [];

@Resolver()
class ActionResolver {
  @Query(() => Boolean)
  look(): boolean {
    return true;
  }

  @Mutation(() => Boolean)
  changeSecret(@Arg('nodeId', () => ID) nodeId: string, @Arg('current', () => String) @Secret() _current: string, @Arg('key', () => KeyInput) _key: KeyInput): boolean {
    done.push(nodeId);
    return true;
  }

  @Mutation(() => Boolean)
  refuse(@Arg('why', () => String) why: string, @Ctx() _context: RequestContext): boolean {
    throw new BadUserInputError('why', message('validation.tooLong', { max: why.length - 1 }));
  }
}

async function setUp() {
  const trail = new MemoryTrail();
  const schema = await buildSchema({
    resolvers: [ActionResolver],
    globalMiddlewares: [createAuditMiddleware(trail), createInputGuard()],
    directives: [...specifiedDirectives, ...INPUT_MARK_DIRECTIVES],
    validate: false,
  });
  const context: RequestContext = {
    requestId: 'r-1',
    logger: pino({ level: 'silent' }),
    user: { id: 'u', username: 'alice', role: 'ADMIN' },
    agentToken: null,
    events: createInProcessEventBus(),
    origin: { address: '198.18.0.50', userAgent: null },
  };
  const run = (source: string, variableValues: Record<string, unknown> = {}) => graphql({ schema, source, variableValues, contextValue: context });
  return { trail, run };
}

const CHANGE = 'mutation($k: KeyInput!) { changeSecret(nodeId: "n1", current: "hunter2-long", key: $k) }';

describe('the audit middleware', () => {
  it('writes the entry before the action and completes it after, with @secret values redacted', async () => {
    const { trail, run } = await setUp();
    done.length = 0;
    const result = await run(CHANGE, { k: { name: 'deploy', privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----' } });
    expect(result.errors).toBeUndefined();
    expect(done).toEqual(['n1']);
    expect(trail.entries).toEqual([
      {
        id: '1',
        actor: 'alice',
        action: 'changeSecret',
        targetType: 'Boolean',
        targetId: 'n1',
        result: 'SUCCESS',
        detail: { args: { nodeId: 'n1', current: '[redacted]', key: { name: 'deploy', privateKey: '[redacted]' } } },
        requestId: 'r-1',
      },
    ]);
    expect(JSON.stringify(trail.entries)).not.toMatch(/hunter2|OPENSSH/);
  });

  it('does not act when its entry cannot be written, and says so', async () => {
    const { trail, run } = await setUp();
    done.length = 0;
    trail.refuseWrites = true;
    const result = await run(CHANGE, { k: { name: 'deploy', privateKey: 'k' } });
    expect(result.errors?.[0]?.extensions['code']).toBe('UNAVAILABLE');
    expect(result.errors?.[0]?.message).toBe('the audit log cannot be written right now, so nothing was done; try again shortly');
    expect(done).toEqual([]);
  });

  it('records a refusal of bad input as a FAILURE with its code, and the action does not run', async () => {
    const { trail, run } = await setUp();
    done.length = 0;
    const nul = await run(CHANGE, { k: { name: 'de\u0000ploy', privateKey: 'k' } });
    expect(nul.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'key.name' });
    const refused = await run('mutation { refuse(why: "long") }');
    expect(refused.errors?.[0]?.message).toBe('why is longer than 3 characters');
    expect(done).toEqual([]);
    expect(trail.entries.map((entry) => [entry.action, entry.result, entry.detail['code']])).toEqual([
      ['changeSecret', 'FAILURE', 'BAD_USER_INPUT'],
      ['refuse', 'FAILURE', 'BAD_USER_INPUT'],
    ]);
  });

  it('leaves queries alone', async () => {
    const { trail, run } = await setUp();
    expect((await run('{ look }')).data).toEqual({ look: true });
    expect(trail.entries).toEqual([]);
  });
});

describe('targetOf', () => {
  it('names the target from the arguments or the input', () => {
    expect(targetOf({ nodeId: 'n1', input: { hostname: 'h' } })).toBe('n1');
    expect(targetOf({ input: { name: 'prod' } })).toBe('prod');
    expect(targetOf({ enabled: true })).toBeNull();
  });
});
