import { type ValidationError, registerDecorator, validate } from 'class-validator';
import type { ValidatorFn } from 'type-graphql';
import type { Problem } from '@ccos/shared/domain';
import { BadUserInputError } from './errors';

/**
 * Validates arguments and input objects with class-validator and reports the first
 * problem as BAD_USER_INPUT with a message that starts with the field's path
 * (e.g. `input.vip "x" is not an IPv4 or IPv6 address`).
 */
export const validateArguments: ValidatorFn = async (argValue, _argType, resolverData) => {
  if (argValue === null || typeof argValue !== 'object') {
    return;
  }
  const values = Array.isArray(argValue) ? argValue : [argValue];
  const argName = argumentNameOf(argValue, resolverData.args);
  for (const value of values) {
    if (value === null || typeof value !== 'object') {
      continue;
    }
    const errors = await validate(value as object, { forbidUnknownValues: false, validationError: { target: false, value: false } });
    const first = firstProblem(errors, argName ? [argName] : []);
    if (first) {
      throw new BadUserInputError(first.path, first.message);
    }
  }
};

/** type-graphql hands over a converted instance, so the argument is found by its keys, not by identity. */
function argumentNameOf(argValue: object, args: Record<string, unknown>): string | undefined {
  const keys = Object.keys(argValue).filter((key) => (argValue as Record<string, unknown>)[key] !== undefined).sort().join();
  return Object.entries(args).find(
    ([, value]) => value !== null && typeof value === 'object' && Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined).sort().join() === keys,
  )?.[0];
}

function firstProblem(errors: ValidationError[], path: string[]): { path: string; message: string } | null {
  for (const error of errors) {
    const here = [...path, error.property];
    const message = Object.values(error.constraints ?? {})[0];
    if (message) {
      return { path: here.join('.'), message };
    }
    const nested = firstProblem(error.children ?? [], here);
    if (nested) {
      return nested;
    }
  }
  return null;
}

/**
 * Applies a rule from `@ccos/shared/domain` (a function returning a problem or null) as a
 * class-validator constraint, so the API and the console share one set of rules.
 * The message is the rule's own text; the field name is prefixed by {@link validateArguments}.
 */
export function Satisfies<T>(rule: (value: T) => Problem, options: { each?: boolean } = {}): PropertyDecorator {
  return (target, propertyName) => {
    const problems = new WeakMap<object, string>();
    registerDecorator({
      name: `satisfies_${rule.name}`,
      target: target.constructor,
      propertyName: String(propertyName),
      options: { each: options.each },
      validator: {
        validate(value: unknown, args) {
          if (value === undefined || value === null) {
            return true;
          }
          const problem = rule(value as T);
          if (problem) {
            problems.set(args?.object ?? {}, problem);
          }
          return problem === null;
        },
        defaultMessage(args) {
          return problems.get(args?.object ?? {}) ?? 'is invalid';
        },
      },
    });
  };
}
