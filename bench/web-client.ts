/**
 * How soon the web client's home screen is usable on a slow device: Chromium with its CPU
 * slowed four times (DevTools' CPU throttling), a signed-in player (alice of the demo world)
 * opening `/`, until the friends online, the friend requests and the chat history are drawn
 * and the realtime feed is live. Each load starts with an empty cache.
 *
 *   npx tsx bench/web-client.ts
 */
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { launchBrowser, startDemoServer } from '../scripts/demo-server.js';

const LOADS = 7;

/** Polled in the page at each frame: the moment everything is drawn, by the page's own clock (from navigation start). */
const INTERACTIVE_AT = `new Promise((resolve) => {
  const check = () => {
    const drawn = document.querySelector('.chat-lines li') && document.querySelector('#online-title') && document.querySelector('#requests-title');
    const live = [...document.querySelectorAll('.chat [role=status]')].some((e) => /^Live/.test(e.textContent || ''));
    const loading = document.querySelector('main p[role=status]:not(.muted):not(.notice)');
    if (drawn && live && !loading) resolve(performance.now());
    else requestAnimationFrame(check);
  };
  check();
})`;
const CPU_SLOWDOWN = 4;

export async function measureWebClient(log: (line: string) => void = () => {}): Promise<string> {
  const server = await startDemoServer();
  const browser = await launchBrowser();
  try {
    const signin = await fetch(`${server.origin}/api/auth.signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
    });
    const session = (
      (await signin.json()) as { data: { user_id: number; access_token: string; expires_in: number; refresh_token: string } }
    ).data;
    const stored = JSON.stringify({
      user_id: session.user_id,
      access_token: session.access_token,
      expires: Math.floor(Date.now() / 1000) + session.expires_in,
      refresh_token: session.refresh_token,
    });
    const times: number[] = [];
    for (let load = 0; load < LOADS; load++) {
      const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, locale: 'en-US' });
      await context.addInitScript((value) => localStorage.setItem('session', value), stored);
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
      await page.goto(`${server.origin}/`, { waitUntil: 'commit' });
      // Polled in the page at each frame: the moment everything is drawn, by the page's own clock.
      // A string, not a function: the TypeScript loader would add helpers the page does not have.
      const interactive = (await page.evaluate(INTERACTIVE_AT)) as number;
      times.push(interactive);
      log(`  load ${load + 1}: ${interactive.toFixed(0)} ms`);
      await context.close();
    }
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const budget = execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/web-bundle-size.mjs', import.meta.url))], {
      encoding: 'utf8',
    }).trim();
    return [
      '## Web client',
      '',
      `Home screen usable (friends, requests, chat drawn, feed live) after opening \`/\` signed in, Chromium with ${CPU_SLOWDOWN}× CPU slowdown, empty cache, ${LOADS} loads:`,
      '',
      '| median | fastest | slowest |',
      '| --- | --- | --- |',
      `| ${median.toFixed(0)} ms | ${sorted[0]!.toFixed(0)} ms | ${sorted[sorted.length - 1]!.toFixed(0)} ms |`,
      '',
      budget,
      '',
    ].join('\n');
  } finally {
    await browser.close();
    await server.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) console.log(await measureWebClient(console.log));
