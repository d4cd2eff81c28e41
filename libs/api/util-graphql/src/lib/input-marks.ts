import { DirectiveLocation, GraphQLDirective, type GraphQLArgument, type GraphQLInputField } from 'graphql';
import { Directive } from 'type-graphql';

/**
 * `@secret` in the schema: the argument or input field carries a credential (a password, a key,
 * a kubeconfig, a token). Audit entries, logs and error messages never show its value.
 */
export const SecretDirective = new GraphQLDirective({
  name: 'secret',
  description: 'A credential: its value never appears in responses, logs, errors or the audit log.',
  locations: [DirectiveLocation.ARGUMENT_DEFINITION, DirectiveLocation.INPUT_FIELD_DEFINITION],
});

/**
 * `@multiline` in the schema: a text that may hold line breaks and tabs (a kubeconfig, a PEM
 * key or certificate). Every other string refuses control characters.
 */
export const MultiLineDirective = new GraphQLDirective({
  name: 'multiline',
  description: 'A text that may contain line breaks and tabs; other strings refuse every control character.',
  locations: [DirectiveLocation.ARGUMENT_DEFINITION, DirectiveLocation.INPUT_FIELD_DEFINITION],
});

/** The directives these marks need in the schema (`buildSchema({ directives })`). */
export const INPUT_MARK_DIRECTIVES = [SecretDirective, MultiLineDirective] as const;

type MarkDecorator = PropertyDecorator & ParameterDecorator;

/**
 * Marks an argument (`@Arg('password') @Secret() password`) or an input field as a credential,
 * where it is declared. The mark is the `@secret` directive, so it shows in schema.graphql and
 * everything that redacts reads it from the schema: nothing keeps a list of names.
 */
export function Secret(): MarkDecorator {
  return Directive(`@${SecretDirective.name}`) as MarkDecorator;
}

/** Marks an argument or input field as multi-line text (line breaks and tabs allowed). */
export function MultiLine(): MarkDecorator {
  return Directive(`@${MultiLineDirective.name}`) as MarkDecorator;
}

type Markable = Pick<GraphQLArgument | GraphQLInputField, 'astNode'>;

function hasDirective(definition: Markable, name: string): boolean {
  return definition.astNode?.directives?.some((directive) => directive.name.value === name) ?? false;
}

/** Whether an argument or input field is marked `@secret` (in a built or a parsed schema). */
export function isSecretInput(definition: Markable): boolean {
  return hasDirective(definition, SecretDirective.name);
}

/** Whether an argument or input field is marked `@multiline`. */
export function allowsLineBreaks(definition: Markable): boolean {
  return hasDirective(definition, MultiLineDirective.name);
}
