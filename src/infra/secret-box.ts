import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** Bytes of a secret key: AES-256. */
export const SECRET_KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** The stored form's version: `v1:<nonce>:<ciphertext and tag>`, both base64. */
const SEALED_PREFIX = 'v1:';
const SEALED_FORM = /^v1:[A-Za-z0-9+/]{16}:[A-Za-z0-9+/]+={0,2}$/;

/** A secret key that is malformed, missing where one is required, or not the one the data was sealed with. */
export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/** A key as configured: 64 hexadecimal digits, or the base64 (or base64url) of 32 bytes. */
export function parseSecretKey(text: string, origin: string): Buffer {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const key = Buffer.from(value, 'base64');
    if (key.length === SECRET_KEY_BYTES) return key;
  }
  throw new SecretKeyError(
    `${origin}: a secret key is 32 random bytes written as 64 hexadecimal digits (or in base64); make one with \`openssl rand -hex 32\``,
  );
}

/** A new random key in the form it is written down (hexadecimal). */
export function newSecretKeyText(): string {
  return randomBytes(SECRET_KEY_BYTES).toString('hex');
}

/**
 * Seals the secrets the server must read back (TOTP secrets) with AES-256-GCM: a random
 * 96-bit nonce per value, the tag proving the value was sealed with this key and not changed.
 */
export class SecretBox {
  /** Names the key without revealing it (an HMAC of a fixed text), for messages about a wrong key. */
  readonly fingerprint: string;
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== SECRET_KEY_BYTES) throw new SecretKeyError(`a secret key has ${SECRET_KEY_BYTES} bytes, not ${key.length}`);
    this.#key = Buffer.from(key);
    this.fingerprint = createHmac('sha256', this.#key).update('game-platform secret key fingerprint').digest('hex').slice(0, 16);
  }

  /** A key of its own for `purpose` (an HMAC of it under this key): the same in every process that has this key. */
  derive(purpose: string): Buffer {
    return createHmac('sha256', this.#key).update(`game-platform ${purpose}`).digest();
  }

  static isSealed(value: string): boolean {
    return value.startsWith(SEALED_PREFIX);
  }

  seal(plain: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}${nonce.toString('base64')}:${sealed.toString('base64')}`;
  }

  /** The plain value of a sealed one; SecretKeyError when it was sealed with another key, or changed. */
  open(stored: string): string {
    if (!SEALED_FORM.test(stored)) throw new SecretKeyError('a stored secret is not in the sealed form');
    const [, nonceText, sealedText] = stored.split(':');
    if (nonceText === undefined || sealedText === undefined) throw new SecretKeyError('a stored secret is not in the sealed form');
    const nonce = Buffer.from(nonceText, 'base64');
    const sealed = Buffer.from(sealedText, 'base64');
    if (nonce.length !== NONCE_BYTES || sealed.length < TAG_BYTES) throw new SecretKeyError('a stored secret is not in the sealed form');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, nonce);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError('a stored secret does not open with this secret key');
    }
  }
}
