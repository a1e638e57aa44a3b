/** The credentials of an `Authorization: Bearer <credentials>` header, its scheme in any case (RFC 9110); undefined for any other. */
export function bearerCredentials(header: unknown): string | undefined {
  if (typeof header !== 'string' || !/^bearer[ \t]/i.test(header)) return undefined;
  const credentials = header.slice(7).trim();
  return credentials === '' ? undefined : credentials;
}
