import type { AbstractControl, ValidationErrors, ValidatorFn } from '@angular/forms';
import type { Problem } from '@ccos/shared/domain';

/**
 * An Angular validator made of a check from @ccos/shared/domain (checkUsername, checkPassword,
 * checkHostname, checkIp …), so the console refuses exactly what the API would. The domain's
 * coded text is kept under `key` for a form that wants to show it.
 */
export function domainValidator(check: (value: string) => Problem, key = 'domain'): ValidatorFn {
  return (control: AbstractControl): ValidationErrors | null => {
    const problem = check(String(control.value ?? ''));
    return problem === null ? null : { [key]: problem };
  };
}

/** Like Validators.required, but a value of only spaces counts as empty (names are trimmed before they are sent). */
export const requiredText: ValidatorFn = (control) => (String(control.value ?? '').trim() === '' ? { required: true } : null);

/** A group validator: the control `field` must equal the control `other` (a password and its confirmation). */
export function sameAs(field: string, other: string, key = 'mismatch'): ValidatorFn {
  return (group) => (group.get(field)?.value === group.get(other)?.value ? null : { [key]: true });
}

/** A group validator: the control `field` must differ from the control `other` (a new password from the current one). */
export function differentFrom(field: string, other: string, key = 'same'): ValidatorFn {
  return (group) => {
    const value = group.get(field)?.value;
    return value && value === group.get(other)?.value ? { [key]: true } : null;
  };
}

/** The first of `order` whose error `errorOf` reports, for moving focus to it. */
export function firstWithError<F extends string>(order: readonly F[], errorOf: (field: F) => string | null): number {
  return order.findIndex((field) => errorOf(field) !== null);
}
