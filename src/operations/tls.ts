import { readFileSync } from 'node:fs';
import { createSecureContext, type Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';

export interface TlsFiles {
  /** PEM certificate chain: the server's certificate first, then the intermediates. */
  certFile: string;
  /** PEM private key of the certificate. */
  keyFile: string;
}

/** The TLS files of a configuration, both or none (one alone is a mistake to report). */
export function tlsFilesOf(tls: { certFile?: string; keyFile?: string } | undefined): TlsFiles | undefined {
  if (!tls) return undefined;
  if (!tls.certFile || !tls.keyFile) throw new Error('--tls-cert and --tls-key go together: give both or neither');
  return { certFile: tls.certFile, keyFile: tls.keyFile };
}

/** The certificate and key as read from their files (throws naming the files when unreadable or not a matching PEM pair). */
export function readTlsFiles(files: TlsFiles): { cert: Buffer; key: Buffer } {
  const read = (path: string, what: string) => {
    try {
      return readFileSync(path);
    } catch (error) {
      throw new Error(`cannot read the TLS ${what} ${path}: ${(error as Error).message}`, { cause: error });
    }
  };
  const pair = { cert: read(files.certFile, 'certificate'), key: read(files.keyFile, 'key') };
  try {
    createSecureContext(pair);
  } catch (error) {
    throw new Error(
      `the TLS certificate ${files.certFile} and key ${files.keyFile} are not a PEM certificate and its key: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return pair;
}

/**
 * Reads the certificate and key again and serves them to new connections (connections open
 * keep theirs). A pair that cannot be read or does not match leaves the one in use.
 * Returns whether the new pair is in use.
 */
export function reloadTls(app: FastifyInstance, files: TlsFiles): boolean {
  try {
    (app.server as unknown as TlsServer).setSecureContext(readTlsFiles(files));
    app.log.info({ cert: files.certFile }, 'TLS certificate reloaded');
    return true;
  } catch (error) {
    app.log.error({ err: error, cert: files.certFile }, 'TLS certificate not reloaded: still serving the previous one');
    return false;
  }
}
