import { badRequest } from './api-error';

/** One parsed label requirement. */
export interface LabelRequirement {
  key: string;
  operator: 'exists' | 'notexists' | 'in' | 'notin' | 'equals' | 'notequals' | 'gt' | 'lt';
  values: string[];
}

/** A compiled selector; the empty selector matches everything. */
export interface LabelSelector {
  requirements: LabelRequirement[];
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
}

type Token =
  | { kind: 'word'; text: string }
  | { kind: 'op'; text: '!' | '=' | '==' | '!=' | '(' | ')' | ',' | '>' | '<' };

const WORD_CHAR = /[A-Za-z0-9._/-]/;

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i];
    if (ch === ' ' || ch === '\t') {
      i++;
    } else if (ch === '!' && input[i + 1] === '=') {
      tokens.push({ kind: 'op', text: '!=' });
      i += 2;
    } else if (ch === '=' && input[i + 1] === '=') {
      tokens.push({ kind: 'op', text: '==' });
      i += 2;
    } else if (ch === '!' || ch === '=' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<') {
      tokens.push({ kind: 'op', text: ch });
      i++;
    } else if (WORD_CHAR.test(ch)) {
      let j = i;
      while (j < input.length && WORD_CHAR.test(input[j])) {
        j++;
      }
      tokens.push({ kind: 'word', text: input.slice(i, j) });
      i = j;
    } else {
      throw selectorError(input, `invalid character '${ch}'`);
    }
  }
  return tokens;
}

function selectorError(input: string, why: string): Error {
  return badRequest(`unable to parse requirement: ${why} in label selector "${input}"`);
}

function matchRequirement(req: LabelRequirement, labels: Readonly<Record<string, string>> | undefined): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, req.key);
  const value = has ? labels[req.key] : undefined;
  switch (req.operator) {
    case 'exists':
      return has;
    case 'notexists':
      return !has;
    case 'equals':
    case 'in':
      return has && req.values.includes(value ?? '');
    case 'notequals':
    case 'notin':
      return !has || !req.values.includes(value ?? '');
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(value ?? '')) {
        return false;
      }
      const n = Number(value);
      return req.operator === 'gt' ? n > Number(req.values[0]) : n < Number(req.values[0]);
    }
  }
}

/**
 * Parses a label selector string: equality (`a=b`, `a==b`, `a!=b`), set-based (`a in (x,y)`,
 * `a notin (x)`, `a`, `!a`) and `a>1`/`a<1`, comma-separated (logical AND).
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
 */
export function parseLabelSelector(input: string | undefined): LabelSelector {
  const text = (input ?? '').trim();
  const requirements: LabelRequirement[] = [];
  const tokens = text ? tokenize(text) : [];
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const next = (): Token | undefined => tokens[pos++];
  const word = (what: string): string => {
    const t = next();
    if (!t || t.kind !== 'word') {
      throw selectorError(text, `expected ${what}`);
    }
    return t.text;
  };
  while (pos < tokens.length) {
    const first = next();
    if (!first) {
      break;
    }
    if (first.kind === 'op' && first.text === '!') {
      requirements.push({ key: word('a key after "!"'), operator: 'notexists', values: [] });
    } else if (first.kind === 'word') {
      const key = first.text;
      const op = peek();
      if (!op || (op.kind === 'op' && op.text === ',')) {
        requirements.push({ key, operator: 'exists', values: [] });
      } else if (op.kind === 'op' && (op.text === '=' || op.text === '==' || op.text === '!=')) {
        next();
        const valueToken = peek();
        let value = '';
        if (valueToken && valueToken.kind === 'word') {
          value = valueToken.text;
          next();
        }
        requirements.push({ key, operator: op.text === '!=' ? 'notequals' : 'equals', values: [value] });
      } else if (op.kind === 'op' && (op.text === '>' || op.text === '<')) {
        next();
        const value = word('an integer value');
        if (!/^-?\d+$/.test(value)) {
          throw selectorError(text, `for 'Gt', 'Lt' operators, the value must be an integer`);
        }
        requirements.push({ key, operator: op.text === '>' ? 'gt' : 'lt', values: [value] });
      } else if (op.kind === 'word' && (op.text === 'in' || op.text === 'notin')) {
        next();
        const open = next();
        if (!open || open.kind !== 'op' || open.text !== '(') {
          throw selectorError(text, `found '${open?.text ?? 'end of string'}', expected: '('`);
        }
        const values: string[] = [];
        for (;;) {
          const t = next();
          if (!t) {
            throw selectorError(text, `found 'end of string', expected: ')'`);
          }
          if (t.kind === 'op' && t.text === ')') {
            break;
          }
          if (t.kind === 'op' && t.text === ',') {
            continue;
          }
          if (t.kind !== 'word') {
            throw selectorError(text, `found '${t.text}', expected: value`);
          }
          values.push(t.text);
        }
        if (values.length === 0) {
          throw selectorError(text, `for 'in', 'notin' operators, values set can't be empty`);
        }
        requirements.push({ key, operator: op.text === 'in' ? 'in' : 'notin', values });
      } else {
        throw selectorError(text, `found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`);
      }
    } else {
      throw selectorError(text, `found '${first.text}', expected: !, identifier`);
    }
    const sep = next();
    if (sep && !(sep.kind === 'op' && sep.text === ',')) {
      throw selectorError(text, `found '${sep.text}', expected: ',' or 'end of string'`);
    }
  }
  return { requirements, matches: (labels) => requirements.every((req) => matchRequirement(req, labels)) };
}

/**
 * Turns a `metav1.LabelSelector` object (`matchLabels` + `matchExpressions`) into a selector.
 * A missing selector object matches nothing, an empty one everything (PDB semantics in policy/v1).
 * @see https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/label-selector/
 */
export function labelSelectorFromObject(selector: unknown): LabelSelector {
  if (typeof selector !== 'object' || selector === null) {
    return { requirements: [], matches: () => false };
  }
  const { matchLabels, matchExpressions } = selector as {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values?: string[] }[];
  };
  const requirements: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(matchLabels ?? {})) {
    requirements.push({ key, operator: 'equals', values: [value] });
  }
  for (const expr of matchExpressions ?? []) {
    const operator = ({ In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: 'notexists' } as const)[expr.operator];
    if (!operator) {
      return { requirements: [], matches: () => false };
    }
    requirements.push({ key: expr.key, operator, values: expr.values ?? [] });
  }
  return { requirements, matches: (labels) => requirements.every((req) => matchRequirement(req, labels)) };
}

/** One `field=value` / `field!=value` term. */
export interface FieldRequirement {
  field: string;
  value: string;
  negate: boolean;
}

/** Reads the value of a supported field label from an object. */
export type FieldGetter = (obj: unknown) => string | undefined;

/** A compiled field selector. */
export interface FieldSelector {
  requirements: FieldRequirement[];
  matches(obj: unknown): boolean;
  /** The value of an equality term on `field`, used to pick an index (`spec.nodeName`). */
  equalityValue(field: string): string | undefined;
}

function splitUnescaped(input: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch === '\\' && i + 1 < input.length) {
      current += ch + input[i + 1];
      i++;
    } else if (ch === separator) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function unescapeFieldValue(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}

/**
 * Parses a field selector (`spec.nodeName=n1,status.phase!=Failed`) against the field labels a
 * resource supports; an unsupported label is a 400 like the real server's.
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/field-selectors/
 */
export function parseFieldSelector(input: string | undefined, fields: Readonly<Record<string, FieldGetter>>): FieldSelector {
  const text = (input ?? '').trim();
  const requirements: FieldRequirement[] = [];
  if (text) {
    for (const term of splitUnescaped(text, ',')) {
      const match = /^(.*?)(!=|==|=)(.*)$/s.exec(term.trim());
      if (!match) {
        throw badRequest(`invalid field selector: "${term}": invalid selector: '${term}'; can't understand '${term}'`);
      }
      const field = match[1].trim();
      if (!fields[field]) {
        throw badRequest(`field label not supported: ${field}`);
      }
      requirements.push({ field, value: unescapeFieldValue(match[3].trim()), negate: match[2] === '!=' });
    }
  }
  return {
    requirements,
    matches: (obj) =>
      requirements.every((req) => {
        const actual = fields[req.field](obj) ?? '';
        return req.negate ? actual !== req.value : actual === req.value;
      }),
    equalityValue: (field) => requirements.find((r) => r.field === field && !r.negate)?.value,
  };
}
