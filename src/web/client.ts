import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The built client (compressed by the build: nothing is compressed while the server starts): web/dist below the package's root (src/web and dist/web are both two levels below it). */
export const CLIENT_DIR = new URL('../../web/dist/', import.meta.url).pathname;

/**
 * Paths the client draws itself (history-API routing): each is answered with its page. They
 * follow the reference service's paths where it has them.
 */
export const CLIENT_ROUTES = [
  '/',
  '/signin',
  '/signup',
  '/reset-password',
  '/confirm-email',
  '/profile/:id',
  '/p/:domain',
  '/inventory',
  '/trades',
  '/trades/outgoing',
  '/trades/history',
  '/trades/new',
  '/friends',
  '/settings',
  '/promo',
  '/market',
  '/market/my',
  '/market/history',
  '/shop',
  '/messages',
  '/messages/:id',
  '/admin',
  '/admin/:section',
  '/admin/:section/:id',
  '/lobby',
  '/m1tv',
  // The reference's link to watch a game, /m1tv/#/{gs_id}/{gs_game_id}: the client opens its table.
  '/m1tv/',
  '/table/*',
];

/**
 * No script but the client's own files, no inline script or style, nothing framed; images from
 * anywhere over HTTPS (operators may keep item images on their own storage).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

interface ClientFile {
  type: string;
  identity: Buffer;
  br?: Buffer;
  gzip?: Buffer;
}

function filesBelow(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesBelow(path) : [path];
  });
}

/** Every file of the built client by its URL path, with the compressed copies the build wrote beside it (`.br`, `.gz`). */
function loadClient(dir: string): Map<string, ClientFile> {
  const paths = filesBelow(dir);
  const present = new Set(paths);
  const files = new Map<string, ClientFile>();
  for (const path of paths) {
    if (path.endsWith('.br') || path.endsWith('.gz')) continue;
    const file: ClientFile = { type: TYPES[extname(path)] ?? 'application/octet-stream', identity: readFileSync(path) };
    if (present.has(`${path}.br`)) file.br = readFileSync(`${path}.br`);
    if (present.has(`${path}.gz`)) file.gzip = readFileSync(`${path}.gz`);
    files.set(`/${relative(dir, path).split('\\').join('/')}`, file);
  }
  return files;
}

/** The best encoding the request accepts that the file has: brotli, then gzip, else none. */
function encodingFor(request: FastifyRequest, file: ClientFile): 'br' | 'gzip' | undefined {
  const accepted = String(request.headers['accept-encoding'] ?? '').toLowerCase();
  const offers = (name: string) => new RegExp(`(^|[\\s,])${name}(;\\s*q=(?!0(\\.0*)?\\s*($|,))[\\d.]+)?\\s*($|,)`).test(accepted);
  if (file.br && offers('br')) return 'br';
  if (file.gzip && offers('gzip')) return 'gzip';
  return undefined;
}

function sendFile(request: FastifyRequest, reply: FastifyReply, file: ClientFile, cacheControl: string): FastifyReply {
  const encoding = encodingFor(request, file);
  reply.type(file.type).header('cache-control', cacheControl).header('x-content-type-options', 'nosniff');
  if (file.br || file.gzip) reply.header('vary', 'accept-encoding');
  if (encoding) reply.header('content-encoding', encoding);
  return reply.send(encoding ? file[encoding] : file.identity);
}

/**
 * Serves the player's web client when it is built (web/dist): its page at every client route,
 * with the Content-Security-Policy, and its files under /assets/ with names that change with
 * their content, so they are cached for good. Answers whether it was found.
 */
export function registerWebClient(app: FastifyInstance, dir = CLIENT_DIR): boolean {
  if (!existsSync(join(dir, 'index.html'))) return false;
  const files = loadClient(dir);
  const page = files.get('/index.html')!;
  const sendPage = (request: FastifyRequest, reply: FastifyReply) =>
    sendFile(request, reply, page, 'no-cache')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY');
  for (const route of CLIENT_ROUTES) app.get(route, async (request, reply) => sendPage(request, reply));

  app.get('/assets/*', async (request, reply) => {
    const file = files.get(request.url.split('?')[0]!);
    if (!file) return reply.status(404).type('text/plain; charset=utf-8').send('not found');
    return sendFile(request, reply, file, 'public, max-age=31536000, immutable');
  });
  for (const [path, file] of files)
    if (!path.startsWith('/assets/') && path !== '/index.html')
      app.get(path, async (request, reply) => sendFile(request, reply, file, 'public, max-age=3600'));
  return true;
}
