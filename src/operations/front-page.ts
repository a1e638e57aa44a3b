import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../infra/html.js';
import type { Services } from '../services.js';

/** What the front page asks the domains, handed to it by the composition root (src/app.ts). */
export interface DemoAccountSource {
  /** Whether a world file is the shipped demo world, whose accounts are there to be tried. */
  isShippedDemoWorld(path: string): boolean;
  /** Which of these e-mails have an account. */
  registeredEmails(emails: readonly string[]): Promise<string[]>;
}

/** The package's version: src/operations and dist/operations are both two levels below its root. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/**
 * E-mails of the accounts the shipped demo world gives a plain password; none for any other
 * world file, whose accounts are no one's to advertise.
 */
function demoEmails(worldFile: string | undefined, source: DemoAccountSource): string[] {
  if (!worldFile || !source.isShippedDemoWorld(worldFile)) return [];
  try {
    const world = JSON.parse(readFileSync(worldFile, 'utf8')) as { users?: { email?: unknown; password?: unknown }[] };
    return (world.users ?? []).filter((u) => typeof u.email === 'string' && typeof u.password === 'string').map((u) => u.email as string);
  } catch {
    return [];
  }
}

/**
 * `GET /about` (and `GET /` when the web client is not built): a small page saying what this server is, its version, where its documentation and
 * health checks are and, when the world it started with has demo accounts that are in the
 * database, their e-mails (never their passwords: those are in the README).
 */
export function registerFrontPage(
  app: FastifyInstance,
  services: Pick<Services, 'config'>,
  source: DemoAccountSource,
  paths: string[],
): void {
  const version = escapeHtml(packageVersion());
  const candidates = demoEmails(services.config.world, source);
  const handler = async (_request: FastifyRequest, reply: FastifyReply) => {
    const present = candidates.length === 0 ? [] : await source.registeredEmails(candidates);
    const demo = candidates.filter((email) => present.includes(email));
    const accounts =
      demo.length === 0
        ? ''
        : `<h2>Demo accounts</h2>
<p>The demo world is loaded. Sign in (<code>auth.signin</code>) as one of these; the passwords are in the README.</p>
<ul id="demo-accounts">${demo.map((email) => `<li>${escapeHtml(email)}</li>`).join('')}</ul>`;
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>game-platform ${version}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2em}</style>
</head>
<body>
<h1>game-platform</h1>
<p>A self-hosted server for the HTTP API of an online board-game platform: accounts, profiles, friends, inventories and crafting, the item catalogue and a global chat. Version <span id="version">${version}</span>.</p>
<ul>
<li><a href="/">Play</a>: the web client</li>
<li><a href="/docs">API reference</a>: every method, with requests to try</li>
<li><a href="/openapi.json">OpenAPI document</a></li>
<li><a href="/healthz">Health</a> and <a href="/readyz">readiness</a></li>
</ul>
<p>Methods answer at <code>/api/&lt;method&gt;</code>, for example <a href="/api/gchat.get"><code>/api/gchat.get</code></a>.</p>
${accounts}
</body>
</html>
`;
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
  };
  for (const path of paths) app.get(path, handler);
}
