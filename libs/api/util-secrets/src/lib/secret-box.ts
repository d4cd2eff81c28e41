import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM envelope encryption for secrets at rest (SSH passwords and keys, cluster
 * credentials). Each value gets its own random data key, which is wrapped with the key
 * encryption key derived from `SECRET_KEY`; the purpose (e.g. `node-ssh`) is bound as
 * additional data so a sealed value cannot be moved to another column.
 *
 * Sealed form: `v1.<kek id>.<wrapped data key>.<iv>.<ciphertext+tag>` (base64url parts).
 */
export class SecretBox {
  private readonly keyEncryptionKey: Buffer;
  /** Names the key that sealed a value, so a later key rotation can tell old values apart. */
  readonly keyId: string;

  constructor(secretKey: string) {
    if (secretKey.length < 32) {
      throw new Error('SECRET_KEY must be at least 32 characters (e.g. `openssl rand -base64 32`)');
    }
    this.keyEncryptionKey = Buffer.from(hkdfSync('sha256', secretKey, 'ccos-scaler', 'secret-box key encryption', 32));
    this.keyId = createHash('sha256').update(this.keyEncryptionKey).digest('base64url').slice(0, 8);
  }

  seal(plaintext: string, purpose: string): string {
    const dataKey = randomBytes(32);
    const wrapped = encrypt(this.keyEncryptionKey, dataKey, `${purpose}:key`);
    const body = encrypt(dataKey, Buffer.from(plaintext, 'utf8'), purpose);
    return [FORMAT, this.keyId, wrapped.toString('base64url'), body.toString('base64url')].join('.');
  }

  open(sealed: string, purpose: string): string {
    const [format, keyId, wrapped, body] = sealed.split('.');
    if (format !== FORMAT || !wrapped || !body) {
      throw new Error('not a sealed secret');
    }
    if (keyId !== this.keyId) {
      throw new Error(`secret was sealed with key ${keyId}, but SECRET_KEY is key ${this.keyId}`);
    }
    const dataKey = decrypt(this.keyEncryptionKey, Buffer.from(wrapped, 'base64url'), `${purpose}:key`);
    return decrypt(dataKey, Buffer.from(body, 'base64url'), purpose).toString('utf8');
  }

  sealJson(value: unknown, purpose: string): string {
    return this.seal(JSON.stringify(value), purpose);
  }

  openJson<T>(sealed: string, purpose: string): T {
    return JSON.parse(this.open(sealed, purpose)) as T;
  }

  /** A key for another purpose (e.g. signing session tokens), derived from the same secret. */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.keyEncryptionKey, 'ccos-scaler', purpose, 32));
  }
}

function encrypt(key: Buffer, plaintext: Buffer, purpose: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(purpose, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, ciphertext, cipher.getAuthTag()]);
}

function decrypt(key: Buffer, sealed: Buffer, purpose: string): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) {
    throw new Error('sealed secret is truncated');
  }
  const iv = sealed.subarray(0, IV_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(purpose, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch (error) {
    throw new Error('sealed secret failed its integrity check (wrong key, wrong purpose, or tampered)', { cause: error });
  }
}
