import { ApiError, Code } from '../api/errors.js';

function isUniqueViolation(error: unknown): error is Error {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT_UNIQUE'));
}

export const emailTaken = () => new ApiError(Code.EMAIL_TAKEN, 'the e-mail address belongs to another account');
export const domainTaken = () => new ApiError(Code.DOMAIN_TAKEN, 'the domain belongs to another account');

/** Which unique column a failed write collided on, or null when it was something else. */
export function collision(error: unknown): 'email' | 'domain' | null {
  if (!isUniqueViolation(error)) return null;
  const text = `${error.message} ${(error as { constraint?: string }).constraint ?? ''}`;
  if (/email/.test(text)) return 'email';
  if (/domain/.test(text)) return 'domain';
  return null;
}

/** Rethrows a unique violation on users as its API error (1601, 1602); anything else as it is. */
export function explainCollision(error: unknown): never {
  const column = collision(error);
  if (column === 'email') throw emailTaken();
  if (column === 'domain') throw domainTaken();
  throw error;
}
