import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SecretBox, SecretKeyError, newSecretKeyText, parseSecretKey } from '../infra/secret-box.js';

/** Where a database's secret key came from. */
export type SecretKeySource =
  | { kind: 'setting' }
  /** The key file beside a SQLite database. */
  | { kind: 'file'; file: string }
  /** The key file beside a SQLite database, made now because there was none. */
  | { kind: 'created'; file: string }
  /** An in-memory database: a key of its own, gone with it. */
  | { kind: 'ephemeral' };

/** The key file of a SQLite database: beside it, with `.key` added to its name. */
export function keyFileOf(sqlitePath: string): string {
  return `${resolve(sqlitePath)}.key`;
}

export function describeSecretKeySource(source: SecretKeySource): string {
  switch (source.kind) {
    case 'setting':
      return 'SECRET_KEY (--secret-key)';
    case 'file':
      return source.file;
    case 'created':
      return `${source.file} (made now, as there was none)`;
    case 'ephemeral':
      return 'a key of this in-memory database';
  }
}

export const POSTGRES_NEEDS_KEY =
  'PostgreSQL needs a secret key to seal the TOTP secrets it stores: set SECRET_KEY (or --secret-key) to 64 hexadecimal digits ' +
  '(`openssl rand -hex 32` makes one), and keep it as safely as the database credentials: without it the stored secrets cannot be read';

/**
 * The key that seals a database's secrets: the configured one; for a SQLite file without
 * one, the key file beside the database, made (0600) when there is none; for an in-memory
 * database a random key. PostgreSQL has no file beside it: a key must be configured.
 */
export function secretKeyFor(databaseUrl: string, configured: string | undefined): { box: SecretBox; source: SecretKeySource } {
  if (configured !== undefined) return { box: new SecretBox(parseSecretKey(configured, 'SECRET_KEY')), source: { kind: 'setting' } };
  if (!databaseUrl.startsWith('sqlite:')) throw new SecretKeyError(POSTGRES_NEEDS_KEY);
  const path = databaseUrl.slice('sqlite:'.length);
  if (path === '' || path === ':memory:') return { box: new SecretBox(randomBytes(32)), source: { kind: 'ephemeral' } };
  const file = keyFileOf(path);
  const created = createKeyFile(file);
  return { box: new SecretBox(readKeyFile(file)), source: { kind: created ? 'created' : 'file', file } };
}

export function readKeyFile(file: string): Buffer {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new SecretKeyError(`cannot read the secret key file ${file}: ${(error as Error).message}`);
  }
  return parseSecretKey(text, file);
}

/**
 * Writes a new key to `file` unless one is there: whole and 0600 before it appears (written
 * beside it, then linked into place, which fails when another process was first). True when
 * this call made it.
 */
function createKeyFile(file: string): boolean {
  const partial = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.partial`;
  writeFileSync(partial, `${newSecretKeyText()}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(partial, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(partial, { force: true });
  }
}

/** What to tell the operator when the key file was made now; undefined otherwise. */
export function createdKeyNotice(source: SecretKeySource): string | undefined {
  if (source.kind !== 'created') return undefined;
  return (
    `created the secret key file ${source.file} (mode 0600): it seals the TOTP secrets stored in the database, ` +
    'which cannot be read without it. Back it up with the database, and guard it as the database itself'
  );
}
