import type { Logger } from 'pino';
import type { Stores } from '@ccos/api/data-access-db';
import type { EventBus } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import { LoginThrottle } from './login-throttle';
import { DEFAULT_PASSWORD_CHECK_LIMITS, PasswordCheckSlots } from './password-check-slots';
import { SessionTokens } from './session-tokens';
import { SessionService } from './session.service';
import { type LoginOutcome, UserService } from './user.service';

export interface AuthFeatureOptions {
  readonly stores: Pick<Stores, 'users' | 'sessions' | 'loginLimits'>;
  /** Session tokens are signed with a key derived from it. */
  readonly secrets: SecretBox;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly sessionTtlSeconds: number;
  /** How many password hashes are checked at once; the queue and the per-address share follow from it. */
  readonly passwordChecksAtOnce: number;
  /** Told how each sign-in went (the metrics). */
  readonly onLogin?: (outcome: LoginOutcome) => void;
}

/** The sign-in feature as the composition root sees it. */
export interface AuthFeature {
  readonly users: UserService;
  readonly sessions: SessionService;
  /** Password checks running and waiting now, and the most that ever ran at once. */
  passwordChecks(): PasswordCheckSlots['stats'];
  /** Follows sessions ended and users changed on any replica, so cached sessions end with them. */
  start(): void;
  stop(): void;
}

export function createAuthFeature(options: AuthFeatureOptions): AuthFeature {
  const { stores, passwordChecksAtOnce: atOnce } = options;
  const sessions = new SessionService(stores.sessions, new SessionTokens(options.secrets.deriveKey('session tokens'), options.sessionTtlSeconds), options.events);
  const slots = new PasswordCheckSlots({ ...DEFAULT_PASSWORD_CHECK_LIMITS, concurrent: atOnce, queued: 8 * atOnce, perAddress: 2 * atOnce });
  const users = new UserService(stores.users, { sessions, throttle: new LoginThrottle(stores.loginLimits), slots, onLogin: options.onLogin });
  let stopFollowing: (() => void) | null = null;
  return {
    users,
    sessions,
    passwordChecks: () => slots.stats,
    start() {
      stopFollowing = sessions.follow((error) => options.logger.error({ err: error }, 'stopped following ended sessions'));
    },
    stop() {
      stopFollowing?.();
      stopFollowing = null;
    },
  };
}
