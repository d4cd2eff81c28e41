// Angular's forms are partially compiled; without a DOM test bed the JIT compiler links them.
import '@angular/compiler';
import { FormControl, FormGroup } from '@angular/forms';
import { describe, expect, it } from 'vitest';
import { checkIp, checkPassword, checkUsername } from '@ccos/shared/domain';
import { differentFrom, domainValidator, firstWithError, requiredText, sameAs } from './domain-validators';

describe('form validators made of the domain checks', () => {
  it('refuses what the domain refuses, keeping its coded reason', () => {
    const username = new FormControl('Not A Name', { nonNullable: true, validators: domainValidator(checkUsername) });
    expect(username.errors).toEqual({ domain: checkUsername('Not A Name') });
    expect(username.errors?.['domain']).toMatchObject({ code: 'validation.username' });
    username.setValue('alice');
    expect(username.valid).toBe(true);
  });

  it('checks passwords against the domain length rule', () => {
    const password = new FormControl('short', { nonNullable: true, validators: domainValidator(checkPassword, 'password') });
    expect(password.hasError('password')).toBe(true);
    password.setValue('twelve chars!');
    expect(password.valid).toBe(true);
  });

  it('checks addresses with the domain IP check', () => {
    const ip = new FormControl('10.0.0.300', { nonNullable: true, validators: domainValidator(checkIp) });
    expect(ip.invalid).toBe(true);
    ip.setValue('10.0.0.30');
    expect(ip.valid).toBe(true);
  });

  it('treats a value of only spaces as empty', () => {
    const name = new FormControl('   ', { nonNullable: true, validators: requiredText });
    expect(name.hasError('required')).toBe(true);
    name.setValue(' alice ');
    expect(name.valid).toBe(true);
  });
});

describe('form validators across fields', () => {
  const passwords = () =>
    new FormGroup(
      { current: new FormControl('', { nonNullable: true }), next: new FormControl('', { nonNullable: true }), confirm: new FormControl('', { nonNullable: true }) },
      { validators: [sameAs('confirm', 'next'), differentFrom('next', 'current')] },
    );

  it('wants the confirmation to match the new password', () => {
    const form = passwords();
    form.setValue({ current: 'old password 1', next: 'new password 1', confirm: 'new password 2' });
    expect(form.hasError('mismatch')).toBe(true);
    form.controls.confirm.setValue('new password 1');
    expect(form.hasError('mismatch')).toBe(false);
  });

  it('wants the new password to differ from the current one, but says nothing while both are empty', () => {
    const form = passwords();
    expect(form.hasError('same')).toBe(false);
    form.setValue({ current: 'same password', next: 'same password', confirm: 'same password' });
    expect(form.hasError('same')).toBe(true);
  });

  it('finds the first field with an error, in the order given', () => {
    const errors: Record<string, string | null> = { a: null, b: 'wrong', c: 'wrong' };
    expect(firstWithError(['a', 'b', 'c'], (field) => errors[field] ?? null)).toBe(1);
    expect(firstWithError(['a'], (field) => errors[field] ?? null)).toBe(-1);
  });
});
