/** The credentials of an `Authorization: Bearer <credentials>` header, its scheme in any case (RFC 9110); undefined for any other. */
export function bearerCredentials(header: unknown): string | undefined {
  if (typeof header !== 'string' || !/^bearer[ \t]/i.test(header)) return undefined;
  const credentials = header.slice(7).trim();
  return credentials === '' ? undefined : credentials;
}

/**
 * What is wrong with an `access_token` parameter that is there but not one string (given twice,
 * as a number...); undefined when nothing is. Such a token is refused, never read as no token.
 */
export function tokenParameterProblem(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return undefined;
  return Array.isArray(value) ? 'given more than once' : 'must be a string';
}
