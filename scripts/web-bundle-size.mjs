// The bundle budget: the JavaScript the first page loads (the scripts index.html names and the
// modules they import statically), compressed as the server sends it (brotli), must stay under
// 150 kB. Exits 1 when it does not; --quiet prints nothing when it does.
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const BUDGET = 150 * 1024;
const dist = new URL('../web/dist/', import.meta.url);
const page = readFileSync(new URL('index.html', dist), 'utf8');
const entries = [
  ...page.matchAll(/<script[^>]*src="\/([^"]+)"/g),
  ...page.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="\/([^"]+)"/g),
].map((m) => m[1]);
const seen = new Set();
const queue = [...entries];
while (queue.length) {
  const file = queue.shift();
  if (seen.has(file)) continue;
  seen.add(file);
  const text = readFileSync(new URL(file, dist), 'utf8');
  // Static imports between chunks: `from"./x.js"` or `import"./x.js"` at the top of a module.
  for (const m of text.matchAll(/(?:^|[;\s])(?:import|from)\s*"\.\/([\w.-]+\.js)"/g)) queue.push(file.replace(/[^/]+$/, '') + m[1]);
}
let raw = 0;
let brotli = 0;
let gzip = 0;
for (const file of seen) {
  const bytes = readFileSync(new URL(file, dist));
  raw += bytes.length;
  brotli += brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  gzip += gzipSync(bytes, { level: 9 }).length;
}
const kB = (n) => `${(n / 1024).toFixed(1)} kB`;
if (!process.argv.includes('--quiet') || brotli >= BUDGET)
  console.log(
    `first page JavaScript: ${[...seen].join(', ')}: ${kB(raw)} raw, ${kB(gzip)} gzip, ${kB(brotli)} brotli (budget ${kB(BUDGET)})`,
  );
if (brotli >= BUDGET) process.exit(1);
