import 'reflect-metadata';
import { validate } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';
import { describe, expect, it } from 'vitest';
import { HostAccessInput } from './ssh-credentials.input';

/** An input that takes a host, as addNode's and addNodeGroupSpare's do. */
@InputType()
class SomeHostInput extends HostAccessInput {
  @Field(() => ID)
  groupId!: string;
}

const valid = { groupId: 'g1', hostname: 'worker-1', ip: '198.18.0.10', sshPort: 22, sshUser: 'root', password: 'secret' };

describe('HostAccessInput: every input that takes a host checks it the same way', () => {
  it('accepts a well-formed host', async () => {
    expect(await validate(Object.assign(new SomeHostInput(), valid))).toEqual([]);
  });

  it('refuses each malformed field with the domain\'s check, inherited by the input that extends it', async () => {
    const errors = await validate(Object.assign(new SomeHostInput(), { ...valid, hostname: 'Worker_1', ip: '198.18.0.300', sshPort: 70000, sshUser: 'root; reboot', passphrase: 'x'.repeat(1025) }));
    expect(errors.map((error) => error.property).sort()).toEqual(['hostname', 'ip', 'passphrase', 'sshPort', 'sshUser']);
  });
});
