import { rmSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { SecretBox, SecretKeyError } from '../infra/secret-box.js';
import { describeSecretKeySource, type SecretKeySource } from './secret-key.js';
import type { Tables } from './tables.js';

/** The text sealed in the key check row. */
const KEY_CHECK_TEXT = 'game-platform secret key check';

/** Columns of users holding secrets the server must read back: stored sealed. */
const SEALED_USER_COLUMNS = ['totp_secret', 'totp_pending'] as const;

/** The keys of a database, as openDatabase found them. */
export interface DatabaseKeys {
  secrets: SecretBox;
  secretKeySource: SecretKeySource;
  previousSecrets?: SecretBox;
}

const opens = (box: SecretBox, sealed: string): boolean => {
  try {
    return box.open(sealed) === KEY_CHECK_TEXT;
  } catch (error) {
    if (error instanceof SecretKeyError) return false;
    throw error;
  }
};

/**
 * Checks the secret key against the database and brings every stored secret under it: those
 * still in clear (written before secrets were sealed) are sealed, and when the database was
 * sealed with the previous key (a change of key) every value is sealed again with the new
 * one. Runs on every migration, inside its transaction: idempotent, all or nothing. A
 * database without a check row gets one sealed with this key; one whose check row opens with
 * neither key is refused with SecretKeyError. Resolves to the number of values sealed now.
 */
export async function sealStoredSecrets(executor: Kysely<Tables>, keys: DatabaseKeys, now: number): Promise<number> {
  const { secrets } = keys;
  const previous = await checkSecretKey(executor, keys, now);
  const rows = await executor
    .selectFrom('users')
    .select(['user_id', ...SEALED_USER_COLUMNS])
    .where((eb) => eb.or(SEALED_USER_COLUMNS.map((column) => (previous ? eb(column, 'is not', null) : eb(column, 'not like', 'v1:%')))))
    .execute();
  let sealed = 0;
  for (const row of rows)
    for (const column of SEALED_USER_COLUMNS) {
      const value = row[column];
      if (value === null) continue;
      let plain: string;
      if (!SecretBox.isSealed(value)) plain = value;
      else if (previous) plain = previous.open(value);
      else continue;
      await executor
        .updateTable('users')
        .set({ [column]: secrets.seal(plain) })
        .where('user_id', '=', row.user_id)
        .where(column, '=', value)
        .execute();
      sealed++;
    }
  return sealed;
}

/** Undefined when the database is sealed with the secret key; the previous key when it is sealed with that one (the check row is moved to the new key). */
async function checkSecretKey(executor: Kysely<Tables>, keys: DatabaseKeys, now: number): Promise<SecretBox | undefined> {
  const { secrets, secretKeySource: source, previousSecrets } = keys;
  const read = () => executor.selectFrom('secret_key_check').select(['fingerprint', 'verifier']).where('id', '=', 1).executeTakeFirst();
  let check = await read();
  if (!check) {
    await executor
      .insertInto('secret_key_check')
      .values({ id: 1, fingerprint: secrets.fingerprint, verifier: secrets.seal(KEY_CHECK_TEXT), created_at: now })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    check = (await read())!;
  }
  if (opens(secrets, check.verifier)) return undefined;
  if (previousSecrets && opens(previousSecrets, check.verifier)) {
    await executor
      .updateTable('secret_key_check')
      .set({ fingerprint: secrets.fingerprint, verifier: secrets.seal(KEY_CHECK_TEXT), created_at: now })
      .where('id', '=', 1)
      .execute();
    return previousSecrets;
  }
  if (source.kind === 'created') {
    // The key file was missing: the one just made is of no use, and the next start should say the same.
    rmSync(source.file, { force: true });
    throw new SecretKeyError(
      `the secrets in this database are sealed with a secret key (fingerprint ${check.fingerprint}) that is not here: ` +
        `${source.file} was missing. Put back the key file kept with the database (or its backup), or give that key in SECRET_KEY (--secret-key)`,
    );
  }
  throw new SecretKeyError(
    `wrong secret key: the secrets in this database are sealed with the key whose fingerprint is ${check.fingerprint}, ` +
      `and the key from ${describeSecretKeySource(source)} has fingerprint ${secrets.fingerprint}` +
      (previousSecrets ? ` (and PREVIOUS_SECRET_KEY ${previousSecrets.fingerprint})` : '') +
      '. Start with the key the database was made with (README, "Secrets at rest", says how to change keys)',
  );
}
