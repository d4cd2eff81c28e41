import pino, { type DestinationStream, type Logger } from 'pino';

/** Keys whose values never reach a log line, wherever they appear. */
export const REDACTED_PATHS = [
  'password', '*.password', 'privateKey', '*.privateKey', 'passphrase', '*.passphrase', 'kubeconfig', '*.kubeconfig',
  'token', '*.token', 'caCert', '*.caCert', 'secretKey', '*.secretKey', 'authorization', '*.authorization',
  'req.headers.authorization', 'req.headers.cookie', 'variables', '*.variables',
];

/** JSON logs; pretty only when a person is watching a terminal. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'ccos-scaler-api' } };
  if (destination) {
    return pino(options, destination);
  }
  if (process.stdout.isTTY) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true } } });
  }
  return pino(options);
}
