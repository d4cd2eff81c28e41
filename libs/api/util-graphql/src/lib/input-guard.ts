import { type GraphQLInputType, type GraphQLScalarType, getNullableType, isInputObjectType, isListType, isScalarType } from 'graphql';
import type { MiddlewareFn } from 'type-graphql';
import { type CodedText, bare, message } from '@ccos/shared/messages';
import { BadUserInputError } from './errors';
import { allowsLineBreaks } from './input-marks';

/** JSON arguments (step details) nested deeper than this cannot be stored as jsonb reliably. */
export const MAX_JSON_DEPTH = 32;

function isControl(code: number): boolean {
  return code < 0x20 || code === 0x7f;
}

/** Line feed, carriage return and tab: allowed in `@multiline` text and inside JSON values. */
function isLineBreakOrTab(code: number): boolean {
  return code === 0x0a || code === 0x0d || code === 0x09;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Why a text cannot be taken as it is, or null. NUL cannot be stored in Postgres at all, an
 * unpaired surrogate cannot be stored as UTF-8, and other control characters have no place in a
 * name or an id: they hide text in a terminal and break log lines.
 */
export function unstorableTextProblem(text: string, lineBreaksAllowed: boolean): CodedText | null {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (isControl(code) && !(lineBreaksAllowed && isLineBreakOrTab(code))) {
      const hex = code.toString(16).toUpperCase().padStart(4, '0');
      return code === 0 ? message('validation.nul') : message(isLineBreakOrTab(code) ? 'validation.lineBreak' : 'validation.control', { hex });
    }
    if (isHighSurrogate(code) && isLowSurrogate(text.charCodeAt(index + 1))) {
      index += 1;
    } else if (isHighSurrogate(code) || isLowSurrogate(code)) {
      return message('validation.surrogate', { hex: code.toString(16).toUpperCase() });
    }
  }
  return null;
}

/**
 * A text as Postgres can store it and a log shows it, for records of what was sent (the audit
 * entry of a refused request): control characters other than line breaks and tabs become a
 * visible `\u0000`, unpaired surrogates U+FFFD.
 */
export function storableText(text: string): string {
  if (unstorableTextProblem(text, true) === null) {
    return text;
  }
  let out = '';
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (isControl(code) && !isLineBreakOrTab(code)) {
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    } else if (isHighSurrogate(code) && isLowSurrogate(text.charCodeAt(index + 1))) {
      out += text.slice(index, index + 2);
      index += 1;
    } else {
      out += isHighSurrogate(code) || isLowSurrogate(code) ? '\uFFFD' : text[index];
    }
  }
  return out;
}

/**
 * Refuses, before any resolver runs, every argument that holds text which cannot be stored:
 * BAD_USER_INPUT naming the field (`input.hostname contains a NUL character …`), never the value.
 * One place for every field of every operation, so a new argument is covered the day it is added.
 */
export function createInputGuard(): MiddlewareFn {
  return ({ args, info }, next) => {
    const definitions = info.parentType.getFields()[info.fieldName]?.args;
    if (definitions && definitions.length > 0) {
      for (const definition of definitions) {
        const problem = problemIn(definition.type, args[definition.name], definition.name, allowsLineBreaks(definition));
        if (problem) {
          throw new BadUserInputError(problem.path, problem.problem);
        }
      }
    }
    return next();
  };
}

interface Problem {
  readonly path: string;
  readonly problem: CodedText;
}

function problemIn(type: GraphQLInputType, value: unknown, path: string, lineBreaksAllowed: boolean): Problem | null {
  if (value == null) {
    return null;
  }
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    const items = Array.isArray(value) ? value : [value];
    for (const [index, item] of items.entries()) {
      const problem = problemIn(nullable.ofType, item, `${path}[${index}]`, lineBreaksAllowed);
      if (problem) {
        return problem;
      }
    }
    return null;
  }
  if (isInputObjectType(nullable)) {
    for (const field of Object.values(nullable.getFields())) {
      const problem = problemIn(field.type, (value as Record<string, unknown>)[field.name], `${path}.${field.name}`, allowsLineBreaks(field));
      if (problem) {
        return problem;
      }
    }
    return null;
  }
  if (typeof value === 'string') {
    const problem = unstorableTextProblem(value, lineBreaksAllowed);
    return problem ? { path, problem } : null;
  }
  return isScalarType(nullable) && isJsonScalar(nullable) ? problemInJson(value, path, 0) : null;
}

function isJsonScalar(type: GraphQLScalarType): boolean {
  return type.name === 'JSON' || type.name === 'JSONObject';
}

/** Free text inside JSON (command output) may have line breaks; keys and nesting are checked too. */
function problemInJson(value: unknown, path: string, depth: number): Problem | null {
  if (typeof value === 'string') {
    const problem = unstorableTextProblem(value, true);
    return problem ? { path, problem } : null;
  }
  if (value === null || typeof value !== 'object') {
    return null;
  }
  if (depth >= MAX_JSON_DEPTH) {
    return { path, problem: message('validation.tooDeep', { max: MAX_JSON_DEPTH }) };
  }
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const keyProblem = Array.isArray(value) ? null : unstorableTextProblem(key, false);
    if (keyProblem) {
      return { path, problem: message('validation.keyContains', { problem: bare(keyProblem) }) };
    }
    const problem = problemInJson(inner, Array.isArray(value) ? `${path}[${key}]` : `${path}.${key.length > 64 ? `${key.slice(0, 64)}…` : key}`, depth + 1);
    if (problem) {
      return problem;
    }
  }
  return null;
}
