import { type ValidationError, type ValidationOptions, registerDecorator, validate } from 'class-validator';
import type { ValidatorFn } from 'type-graphql';
import type { Problem } from '@ccos/shared/domain';
import { type CodedText, type Message, type MessageCode, type MessageParams, bare, isMessage, message } from '@ccos/shared/messages';
import { BadUserInputError } from './errors';

/** The `context` key under which a constraint carries its coded message. */
const CODED = 'coded';
/** The constraint name of every {@link Satisfies} rule starts with this. */
const RULE_PREFIX = 'satisfies_';

/**
 * Validates arguments and input objects with class-validator and reports the first problem as
 * BAD_USER_INPUT: the field's path (e.g. `input.vip`) and the coded problem, so the English
 * message reads `input.vip "x" is not an IPv4 or IPv6 address` and clients word it themselves.
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
    // The target is kept so a rule's coded problem can be found again; it never leaves the service.
    const errors = await validate(value as object, { forbidUnknownValues: false, validationError: { target: true, value: false } });
    const first = firstProblem(errors, argName ? [argName] : []);
    if (first) {
      throw new BadUserInputError(first.path, first.problem);
    }
  }
};

/**
 * Options for a class-validator decorator whose message is coded:
 * `@MaxLength(64, coded('validation.tooLong', { max: 64 }))`.
 */
export function coded(code: MessageCode, params: MessageParams = {}): ValidationOptions {
  const text = message(code, params);
  return { message: text.message, context: { [CODED]: bare(text) } };
}

/** type-graphql hands over a converted instance, so the argument is found by its keys, not by identity. */
function argumentNameOf(argValue: object, args: Record<string, unknown>): string | undefined {
  const keys = Object.keys(argValue).filter((key) => (argValue as Record<string, unknown>)[key] !== undefined).sort().join();
  return Object.entries(args).find(
    ([, value]) => value !== null && typeof value === 'object' && Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined).sort().join() === keys,
  )?.[0];
}

function firstProblem(errors: ValidationError[], path: string[]): { path: string; problem: CodedText } | null {
  for (const error of errors) {
    const here = [...path, error.property];
    const [constraint] = Object.keys(error.constraints ?? {});
    if (constraint !== undefined) {
      // A decorator without a coded message says only that the value is invalid: its English text would reach a Chinese page.
      return { path: here.join('.'), problem: codedProblemOf(error, constraint) ?? message('validation.invalid') };
    }
    const nested = firstProblem(error.children ?? [], here);
    if (nested) {
      return nested;
    }
  }
  return null;
}

function codedProblemOf(error: ValidationError, constraint: string): CodedText | null {
  const fromRule = constraint.startsWith(RULE_PREFIX) && error.target ? ruleProblems.get(error.target)?.get(error.property) : undefined;
  if (fromRule) {
    return fromRule;
  }
  const context: unknown = error.contexts?.[constraint]?.[CODED];
  return isMessage(context) ? message(context.code, (context as Message).params) : null;
}

/** The problem each {@link Satisfies} rule found first, by the validated object and its property. */
const ruleProblems = new WeakMap<object, Map<string, CodedText>>();

/**
 * Applies a rule from `@ccos/shared/domain` (a function returning a problem or null) as a
 * class-validator constraint, so the API and the console share one set of rules.
 * The problem is the rule's own coded message; the field name is added by {@link validateArguments}.
 */
export function Satisfies<T>(rule: (value: T) => Problem, options: { each?: boolean } = {}): PropertyDecorator {
  return (target, propertyName) => {
    const property = String(propertyName);
    registerDecorator({
      name: `${RULE_PREFIX}${rule.name}`,
      target: target.constructor,
      propertyName: property,
      options: { each: options.each },
      validator: {
        validate(value: unknown, args) {
          if (value === undefined || value === null) {
            return true;
          }
          const problem = rule(value as T);
          if (problem && args?.object) {
            const found = ruleProblems.get(args.object) ?? new Map<string, CodedText>();
            if (!found.has(property)) {
              found.set(property, problem);
            }
            ruleProblems.set(args.object, found);
          }
          return problem === null;
        },
        defaultMessage(args) {
          return (args?.object ? ruleProblems.get(args.object)?.get(property) : undefined)?.message ?? message('validation.invalid').message;
        },
      },
    });
  };
}

/**
 * Refuses a page size that is not a whole number from 1 to `max`, as a problem of `field`
 * (`validation.between`), for arguments checked by hand rather than by an argument class.
 */
export function checkPageSize(field: string, first: number, max: number): void {
  if (!Number.isInteger(first) || first < 1 || first > max) {
    throw new BadUserInputError(field, message('validation.between', { min: 1, max }));
  }
}
