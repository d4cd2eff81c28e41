import { X509Certificate, createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { type PeerCertificate, type SecureContext, type TLSSocket, checkServerIdentity, connect, createSecureContext } from 'node:tls';
import { HttpError } from './http-error';

/**
 * How to recognise one particular server, instead of the usual "any certificate a
 * system CA signed for this name". The installer service writes it into the agent's
 * config over the SSH session whose host key it pinned, so it never crossed the
 * network unauthenticated.
 */
export interface TlsPin {
  /**
   * PEM CA certificates. The server's chain must end at one of these; the system CAs
   * are not consulted at all, so no other authority can vouch for the server.
   */
  readonly caCertificates?: string;
  /**
   * Also require the certificate to name the URL's host. Off for the service's own
   * private CA: hosts reach the service at whatever address they see it from (the
   * derived agent URL is the address our SSH connection came from), which the
   * certificate may not name, and nobody but the service holds a certificate from
   * that CA. On when the CA also signs other servers (a corporate or public CA): then
   * the name is what tells this server from the others that CA signed.
   */
  readonly verifyHostname?: boolean;
  /**
   * base64 sha256 of the leaf certificate's SubjectPublicKeyInfo (the "pin-sha256" of
   * RFC 7469); when given, the leaf's key must be one of these, whoever signed it.
   */
  readonly publicKeySha256?: readonly string[];
}

/** The error code of a refused pin ({@link isTlsErrorCode} knows it). */
export const CERT_NOT_PINNED = 'CERT_NOT_PINNED';

/** base64 sha256 of a certificate's SubjectPublicKeyInfo. */
export function publicKeySha256(certificate: X509Certificate): string {
  return createHash('sha256').update(certificate.publicKey.export({ type: 'spki', format: 'der' })).digest('base64');
}

/**
 * Why the certificate a TLS socket received is not the pinned one, or null when it is.
 * `now` is injectable for tests of the validity window.
 */
export function pinProblem(socket: TLSSocket, host: string, pin: TlsPin, now: Date = new Date()): string | null {
  const peer = socket.getPeerCertificate(true);
  if (!peer?.raw) {
    return 'the server presented no certificate';
  }
  const leaf = new X509Certificate(peer.raw);
  if (pin.caCertificates !== undefined && !socket.authorized) {
    return `its chain does not lead to the pinned CA (${String(socket.authorizationError ?? 'not verified')})`;
  }
  if (pin.verifyHostname === true) {
    const mismatch = checkServerIdentity(host, peer);
    if (mismatch) {
      return `it does not name ${host} (${mismatch.message})`;
    }
  }
  if (pin.publicKeySha256 !== undefined && pin.publicKeySha256.length > 0) {
    const key = publicKeySha256(leaf);
    if (!pin.publicKeySha256.includes(key)) {
      return `its public key sha256 ${key} is not the pinned ${pin.publicKeySha256.join(' or ')}`;
    }
    // Without a CA, OpenSSL's verdict (which covers the dates) is not ours to use.
    if (pin.caCertificates === undefined && (now < new Date(leaf.validFrom) || now > new Date(leaf.validTo))) {
      return `it is valid only from ${leaf.validFrom} to ${leaf.validTo}`;
    }
  }
  return null;
}

function describeCertificate(peer: PeerCertificate | undefined): string {
  if (!peer?.raw) {
    return 'none';
  }
  const leaf = new X509Certificate(peer.raw);
  const oneLine = (name: string) => name.split('\n').join(', ');
  return `sha256 fingerprint ${leaf.fingerprint256}, subject "${oneLine(leaf.subject)}", issuer "${oneLine(leaf.issuer)}"`;
}

/**
 * One secure context per pinned CA bundle: building one parses every CA certificate, which
 * cost the agent more CPU than any other part of opening a connection.
 */
const contexts = new Map<string, SecureContext>();

function secureContextFor(caCertificates: string): SecureContext {
  let context = contexts.get(caCertificates);
  if (context === undefined) {
    context = createSecureContext({ ca: caCertificates });
    contexts.set(caCertificates, context);
  }
  return context;
}

/**
 * Opens a TLS connection and hands it over only once the server's certificate passed
 * the pin. Node's own check runs inside the handshake but gives no say over the
 * system CAs versus the pin, and a request written to a socket that is still
 * handshaking could reach the wrong server before a later check tears it down; so
 * the HTTP request (and with it the run's bearer token) gets the socket only after
 * {@link pinProblem} said yes.
 */
export function connectPinned(
  target: { readonly host: string; readonly port: number; readonly idleTimeoutMs: number },
  pin: TlsPin,
  /** Called once: with the checked socket, or with the error and the (destroyed) socket. */
  done: (error: HttpError | null, socket: TLSSocket) => void,
): TLSSocket {
  const socket = connect({
    host: target.host,
    port: target.port,
    servername: isIP(target.host) === 0 ? target.host : undefined,
    ...(pin.caCertificates === undefined ? {} : { secureContext: secureContextFor(pin.caCertificates) }),
    ALPNProtocols: ['http/1.1'],
    // The verdict is pinProblem's, made before any byte of the request is written.
    rejectUnauthorized: false,
    checkServerIdentity: () => undefined,
  });
  // Silence ends the connection, during the handshake and after: a cut link must not hang a download.
  socket.setTimeout(target.idleTimeoutMs);
  let settled = false;
  const settle = (error: HttpError | null) => {
    if (settled) {
      return;
    }
    settled = true;
    socket.off('error', onError);
    socket.off('timeout', onTimeout);
    if (error) {
      socket.destroy();
    }
    done(error, socket);
  };
  const onError = (error: NodeJS.ErrnoException) => settle(new HttpError(error.message, error.code ?? 'ECONNRESET', { cause: error }));
  const onTimeout = () => settle(new HttpError(`TLS connection to ${target.host}:${target.port} silent for ${Math.round(target.idleTimeoutMs / 1000)} s`, 'ETIMEDOUT'));
  socket.once('error', onError);
  socket.once('timeout', onTimeout);
  socket.once('secureConnect', () => {
    const problem = pinProblem(socket, target.host, pin);
    if (problem === null) {
      settle(null);
      return;
    }
    const where = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
    settle(new HttpError(`the service's certificate at ${where} (${describeCertificate(socket.getPeerCertificate(true))}) is not the pinned one: ${problem}`, CERT_NOT_PINNED));
  });
  return socket;
}
