import { AuditLogDocument, type AuditResult } from '@ccos/shared/api-schema';
import { type CommandSpec, integerFlag, printJson, stringFlag, usageError } from './command';
import { EXIT } from './exit-codes';
import { columnTitles } from './messages';
import { table } from './output';

const RESULTS: readonly string[] = ['SUCCESS', 'FAILURE', 'DENIED', 'PENDING'];

/** `audit`: the newest audit entries, filtered by actor, action, result or target. */
export const AUDIT: CommandSpec = {
  options: { actor: { type: 'string' }, action: { type: 'string' }, result: { type: 'string' }, target: { type: 'string' }, limit: { type: 'string' } },
  positionals: [],
  async run(context) {
    const result = stringFlag(context, 'result');
    if (result && !RESULTS.includes(result)) {
      throw usageError(context.t, `--result ${RESULTS.join('|')}`);
    }
    const filter = {
      actor: stringFlag(context, 'actor') ?? null,
      action: stringFlag(context, 'action') ?? null,
      targetId: stringFlag(context, 'target') ?? null,
      result: (result as AuditResult | undefined) ?? null,
    };
    const { auditLog } = await context.api().request(AuditLogDocument, { filter, first: integerFlag(context, 'limit') ?? 50 });
    if (context.output !== 'table') {
      printJson(context, auditLog.entries);
      return EXIT.ok;
    }
    const c = columnTitles(context.language);
    context.io.out(
      table(
        [c['AT'], c['ACTOR'], c['ACTION'], c['TARGET'], c['RESULT']].map(String),
        auditLog.entries.map((entry) => [entry.at, entry.actor, entry.action, `${entry.targetType}:${entry.targetId ?? ''}`, entry.code ? `${entry.result} ${entry.code}` : entry.result]),
      ),
    );
    return EXIT.ok;
  },
};
