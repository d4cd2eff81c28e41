import 'reflect-metadata';
import { buildSchema as buildSdlSchema, parse, specifiedDirectives } from 'graphql';
import { Arg, Field, InputType, Mutation, Query, Resolver, buildSchema } from 'type-graphql';
import { describe, expect, it } from 'vitest';
import { INPUT_MARK_DIRECTIVES, MultiLine, Secret, allowsLineBreaks, isSecretInput } from './input-marks';
import { rememberRequestSecrets, scrubRequestSecrets, withRequestSecrets } from './request-secrets';
import { redactSecretArguments, secretValuesInRequest } from './secret-arguments';

@InputType()
class CredentialsInput {
  @Field(() => String)
  user!: string;

  @Field(() => String, { nullable: true })
  @Secret()
  password?: string | null;

  @Field(() => String, { nullable: true })
  @Secret()
  @MultiLine()
  privateKey?: string | null;
}

@InputType()
class HostInput extends CredentialsInput {
  @Field(() => String)
  name!: string;

  @Field(() => [CredentialsInput], { defaultValue: [] })
  fallbacks!: CredentialsInput[];
}

@Resolver()
class MarkedResolver {
  @Query(() => Boolean)
  ping(): boolean {
    return true;
  }

  @Mutation(() => Boolean)
  signIn(@Arg('name', () => String) _name: string, @Arg('password', () => String) @Secret() _password: string): boolean {
    return true;
  }

  @Mutation(() => Boolean)
  addHost(@Arg('input', () => HostInput) _input: HostInput): boolean {
    return true;
  }
}

const schema = await buildSchema({ resolvers: [MarkedResolver], directives: [...specifiedDirectives, ...INPUT_MARK_DIRECTIVES], validate: false });
const mutation = schema.getMutationType();

describe('@Secret and @MultiLine', () => {
  it('mark arguments and input fields (inherited ones too) in the built schema', () => {
    const signIn = mutation?.getFields()['signIn'];
    expect(Object.fromEntries(signIn?.args.map((arg) => [arg.name, isSecretInput(arg)]) ?? [])).toEqual({ name: false, password: true });
    const host = schema.getType('HostInput');
    const fields = host && 'getFields' in host ? (host.getFields() as Record<string, Parameters<typeof isSecretInput>[0]>) : {};
    expect(Object.entries(fields).map(([name, field]) => [name, isSecretInput(field), allowsLineBreaks(field)])).toEqual(
      expect.arrayContaining([
        ['user', false, false],
        ['password', true, false],
        ['privateKey', true, true],
        ['name', false, false],
      ]),
    );
  });

  it('are read the same way from a schema parsed from SDL', () => {
    const parsed = buildSdlSchema('directive @secret on ARGUMENT_DEFINITION | INPUT_FIELD_DEFINITION\ntype Query { login(user: String, password: String @secret): Boolean }');
    expect(parsed.getQueryType()?.getFields()['login']?.args.map(isSecretInput)).toEqual([false, true]);
  });
});

describe('redactSecretArguments', () => {
  it('replaces marked values however deep, keeps the rest, and keeps a missing secret null', () => {
    const addHost = mutation?.getFields()['addHost'];
    const args = {
      input: { name: 'worker-1', user: 'root', password: 'hunter2-long', privateKey: null, fallbacks: [{ user: 'core', password: null, privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----' }] },
    };
    expect(redactSecretArguments(addHost?.args ?? [], args)).toEqual({
      input: { name: 'worker-1', user: 'root', password: '[redacted]', privateKey: null, fallbacks: [{ user: 'core', password: null, privateKey: '[redacted]' }] },
    });
    expect(redactSecretArguments(mutation?.getFields()['signIn']?.args ?? [], { name: 'bob', password: 'pw-of-bob' })).toEqual({ name: 'bob', password: '[redacted]' });
  });
});

describe('secretValuesInRequest', () => {
  it('finds secrets sent as literals, through variables, nested, and with the wrong type', () => {
    const document = parse(`
      mutation($p: String!, $i: HostInput!, $odd: String!) {
        a: signIn(name: "not-secret", password: "literal-secret")
        b: signIn(name: $odd, password: $p)
        addHost(input: $i)
        c: addHost(input: { name: "n", user: "u", password: ["wrong-type-secret"] })
      }`);
    const found = secretValuesInRequest(schema, document, {
      p: 'variable-secret',
      odd: 'also-not-secret',
      i: { name: 'worker', user: 'root', privateKey: 'nested-key', fallbacks: [{ user: 'x', password: 'fallback-secret' }] },
    });
    expect(found.sort()).toEqual(['fallback-secret', 'literal-secret', 'nested-key', 'variable-secret', 'wrong-type-secret']);
  });
});

describe('request secrets', () => {
  it('cut the current request’s secret values out of a text, also JSON-escaped, and nothing outside a request', async () => {
    const multiLine = 'line one\n"quoted" two';
    const scrubbed = await withRequestSecrets(async () => {
      rememberRequestSecrets(['hunter2-long', multiLine, 'ab']);
      await new Promise((wake) => setTimeout(wake, 1));
      return scrubRequestSecrets(`failed with hunter2-long; ${JSON.stringify({ key: multiLine })}; ab stays (too short to be told from words)`);
    });
    expect(scrubbed).toBe('failed with [redacted]; {"key":"[redacted]"}; ab stays (too short to be told from words)');
    expect(scrubRequestSecrets('hunter2-long')).toBe('hunter2-long');
  });

  it('keep requests apart', async () => {
    const [first, second] = await Promise.all(
      ['secret-of-first', 'secret-of-second'].map((secret) =>
        withRequestSecrets(async () => {
          rememberRequestSecrets([secret]);
          await new Promise((wake) => setTimeout(wake, 5));
          return scrubRequestSecrets('secret-of-first secret-of-second');
        }),
      ),
    );
    expect(first).toBe('[redacted] secret-of-second');
    expect(second).toBe('secret-of-first [redacted]');
  });
});
