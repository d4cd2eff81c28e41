import 'reflect-metadata';
import { graphql, specifiedDirectives } from 'graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Field, ID, InputType, Mutation, Query, Resolver, buildSchema } from 'type-graphql';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, createInputGuard, storableText, unstorableTextProblem } from './input-guard';
import { INPUT_MARK_DIRECTIVES, MultiLine } from './input-marks';

@InputType()
class LabelInput {
  @Field(() => String)
  key!: string;
}

@InputType()
class ThingInput {
  @Field(() => String)
  name!: string;

  @Field(() => String, { nullable: true })
  @MultiLine()
  pem?: string | null;

  @Field(() => [LabelInput], { defaultValue: [] })
  labels!: LabelInput[];

  @Field(() => GraphQLJSONObject, { nullable: true })
  detail?: Record<string, unknown> | null;
}

const calls: string[] = [];

@Resolver()
class ThingResolver {
  @Query(() => Boolean)
  ping(): boolean {
    return true;
  }

  @Mutation(() => Boolean)
  touch(@Arg('id', () => ID) id: string, @Arg('input', () => ThingInput, { nullable: true }) _input: ThingInput | null, @Arg('note', () => String, { nullable: true }) @MultiLine() _note: string | null): boolean {
    calls.push(id);
    return true;
  }
}

const schema = await buildSchema({ resolvers: [ThingResolver], globalMiddlewares: [createInputGuard()], directives: [...specifiedDirectives, ...INPUT_MARK_DIRECTIVES], validate: false });
const TOUCH = 'mutation($id: ID!, $input: ThingInput, $note: String) { touch(id: $id, input: $input, note: $note) }';

async function touch(variables: Record<string, unknown>): Promise<{ ok: boolean; code?: unknown; field?: unknown; message?: string }> {
  const result = await graphql({ schema, source: TOUCH, variableValues: variables });
  const error = result.errors?.[0];
  return error ? { ok: false, code: error.extensions['code'], field: error.extensions['field'], message: error.message } : { ok: result.data?.['touch'] === true };
}

describe('unstorableTextProblem', () => {
  it.each([
    ['worker-1', false, null],
    ['名前 with emoji 🚀', false, null],
    ['a\u0000b', false, 'contains a NUL character (U+0000), which cannot be stored'],
    ['a\u0000b', true, 'contains a NUL character (U+0000), which cannot be stored'],
    ['two\nlines', false, 'contains a line break or tab (U+000A); it takes a single line'],
    ['two\r\nlines\tand a tab', true, null],
    ['bell\u0007', true, 'contains the control character U+0007'],
    ['escape \u001b[31m', false, 'contains the control character U+001B'],
    ['delete \u007f', false, 'contains the control character U+007F'],
    ['lone high \ud800 surrogate', false, 'contains an unpaired UTF-16 surrogate (U+D800); send valid Unicode text'],
    ['lone low \udc00', true, 'contains an unpaired UTF-16 surrogate (U+DC00); send valid Unicode text'],
    ['high at the end \ud83d', false, 'contains an unpaired UTF-16 surrogate (U+D83D); send valid Unicode text'],
  ])('%j (line breaks allowed: %s) → %s', (text, lines, problem) => {
    expect(unstorableTextProblem(text, lines)?.message ?? null).toBe(problem);
  });

  it('makes what cannot be stored visible instead, for the audit record of a refusal', () => {
    expect(storableText('a\u0000b\u0007c\nd \ud800 🚀')).toBe('a\\u0000b\\u0007c\nd \uFFFD 🚀');
    expect(storableText('fine')).toBe('fine');
  });
});

describe('the input guard', () => {
  it('refuses text that cannot be stored in any argument, naming the field and not the value, before the resolver runs', async () => {
    calls.length = 0;
    const refused = [
      [{ id: 'n\u0000' }, 'id'],
      [{ id: 'n', input: { name: 'a\u0000' } }, 'input.name'],
      [{ id: 'n', input: { name: 'ok', labels: [{ key: 'fine' }, { key: 'bad\nkey' }] } }, 'input.labels[1].key'],
      [{ id: 'n', input: { name: 'ok', pem: 'bad \ud800' } }, 'input.pem'],
      [{ id: 'n', input: { name: 'ok', detail: { output: 'x\u0000' } } }, 'input.detail.output'],
      [{ id: 'n', input: { name: 'ok', detail: { list: ['fine', 'bell\u0007'] } } }, 'input.detail.list[1]'],
      [{ id: 'n', input: { name: 'ok', detail: { 'key\u0000': 1 } } }, 'input.detail'],
      [{ id: 'n', note: 'bad\u0000note' }, 'note'],
    ] as const;
    for (const [variables, field] of refused) {
      const outcome = await touch(variables);
      expect(outcome).toMatchObject({ ok: false, code: 'BAD_USER_INPUT', field });
      expect(outcome.message?.startsWith(`${field} `)).toBe(true);
      expect(outcome.message).not.toContain('bad');
      expect(outcome.message).not.toContain('\u0000');
    }
    expect(calls).toEqual([]);
  });

  it('takes line breaks where the field is multi-line, and any text in JSON values', async () => {
    calls.length = 0;
    const outcome = await touch({ id: 'n', note: 'line one\nline two', input: { name: 'ok', pem: '-----BEGIN CERTIFICATE-----\r\nMIIB\r\n-----END CERTIFICATE-----\r\n', detail: { outputTail: 'a\n\tb' } } });
    expect(outcome).toEqual({ ok: true });
    expect(calls).toEqual(['n']);
  });

  it('refuses JSON nested deeper than jsonb reliably stores', async () => {
    let deep: Record<string, unknown> = { leaf: true };
    for (let level = 0; level < MAX_JSON_DEPTH + 1; level++) {
      deep = { inner: deep };
    }
    expect(await touch({ id: 'n', input: { name: 'ok', detail: deep } })).toMatchObject({ ok: false, code: 'BAD_USER_INPUT', message: expect.stringContaining(`is nested deeper than ${MAX_JSON_DEPTH} levels`) });
  });
});
