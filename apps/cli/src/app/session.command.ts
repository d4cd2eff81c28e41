import { LoginDocument, LogoutDocument } from '@ccos/shared/api-schema';
import { type CommandSpec, passwordFrom, printJson, stringFlag, usageError } from './command';
import { EXIT } from './exit-codes';
import { forgetSession, readStoredSession, storeSession } from './session-store';

/** `login`: the login mutation; the token goes to the session file (0600), never to the screen. */
export const LOGIN: CommandSpec = {
  options: { username: { type: 'string' }, 'password-file': { type: 'string' }, 'password-stdin': { type: 'boolean' } },
  positionals: [],
  async run(context) {
    const username = stringFlag(context, 'username') ?? 'admin';
    const password = (await passwordFrom(context, false)) ?? (await context.ask(context.t('passwordPrompt', { username }), true));
    if (!password) {
      throw usageError(context.t, context.t('passwordSource'));
    }
    const { login } = await context.anonymousApi().request(LoginDocument, { username, password });
    await storeSession(context.sessionFile, { server: context.server, token: login.token, expiresAt: login.expiresAt, username: login.user.username });
    if (context.output !== 'table') {
      printJson(context, { server: context.server, username: login.user.username, role: login.user.role, expiresAt: login.expiresAt, sessionFile: context.sessionFile });
    } else {
      context.io.out(context.t('signedIn', { server: context.server, username: login.user.username, role: login.user.role, file: context.sessionFile, expiresAt: login.expiresAt }));
    }
    return EXIT.ok;
  },
};

/** `logout`: ends the session in the service and forgets the file. */
export const LOGOUT: CommandSpec = {
  options: {},
  positionals: [],
  async run(context) {
    if (await readStoredSession(context.sessionFile)) {
      await context
        .api()
        .request(LogoutDocument, {})
        .catch(() => undefined);
    }
    await forgetSession(context.sessionFile);
    context.io.out(context.t('signedOut'));
    return EXIT.ok;
  },
};
