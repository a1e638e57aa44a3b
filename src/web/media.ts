import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/** Where the demo world's images are: drawn here, so that the demo looks complete offline. */
export const DEMO_MEDIA_PATH = '/media/demo/';

const NAME = /^([a-z-]+)\/([a-z0-9-]+)\.svg$/;

/** Colours with white text at a contrast of at least 4.5:1. */
const BACKGROUNDS = ['#1f5f99', '#8a3b12', '#2d6a2f', '#6b2f8a', '#9a1f4a', '#0f6470', '#5a5a1c', '#3d4a8f', '#7a4b00', '#4a4a4a'];

/** The picture of an item kind: the shape drawn behind the name's initials. */
const SHAPES: Record<string, string> = {
  avatars: '<circle cx="64" cy="64" r="60"/>',
  covers: '<rect width="128" height="128"/>',
  cases: '<rect x="14" y="30" width="100" height="76" rx="10"/>',
  keys: '<circle cx="44" cy="64" r="26"/><rect x="60" y="58" width="54" height="12" rx="4"/>',
  dice: '<rect x="20" y="20" width="88" height="88" rx="18"/>',
  badges: '<path d="M64 6l16 36 40 4-30 26 9 40-35-21-35 21 9-40L8 46l40-4z"/>',
  'gift-sets': '<rect x="16" y="40" width="96" height="76" rx="6"/><rect x="56" y="20" width="16" height="96"/>',
};

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A deterministic picture for `kind/name`: a shape in a colour drawn from the name, with its initials. */
export function demoImage(kind: string, name: string): string {
  const digest = createHash('sha256').update(`${kind}/${name}`).digest();
  const background = BACKGROUNDS[digest[0]! % BACKGROUNDS.length]!;
  const words = name.replace(/-\d+$/, '').split('-').filter(Boolean);
  const initials = escapeXml(
    words
      .slice(0, 2)
      .map((w) => w[0]!.toUpperCase())
      .join(''),
  );
  const shape = SHAPES[kind] ?? '<rect x="10" y="10" width="108" height="108" rx="14"/>';
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 128 128" width="128" height="128">` +
    `<rect width="128" height="128" fill="#eef1f4"/><g fill="${background}">${shape}</g>` +
    `<text x="64" y="78" font-family="system-ui,sans-serif" font-size="40" font-weight="700" text-anchor="middle" fill="#fff">${initials}</text>` +
    `</svg>`
  );
}

/** Serves the demo world's images at /media/demo/<kind>/<name>.svg. */
export function registerDemoMedia(app: FastifyInstance): void {
  app.get(`${DEMO_MEDIA_PATH}*`, async (request, reply) => {
    const match = NAME.exec(request.url.slice(DEMO_MEDIA_PATH.length).split('?')[0]!);
    if (!match) return reply.status(404).type('text/plain; charset=utf-8').send('not found');
    return reply
      .type('image/svg+xml')
      .header('cache-control', 'public, max-age=86400')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .header('x-content-type-options', 'nosniff')
      .send(demoImage(match[1]!, match[2]!));
  });
}
