import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { WAIT } from './components.js';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Serious and critical findings of axe-core on the page as it is now. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(`${axeSource}\n;undefined`);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${page.url()}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

export function watchPage(page: Page, origin: string, problems: string[]): void {
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  void page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return route.continue();
    problems.push(`outside request: ${url}`);
    return route.abort();
  });
}

export async function signIn(page: Page, origin: string, email: string, password: string): Promise<void> {
  await page.goto(`${origin}/signin`, WAIT);
  await page.getByLabel('E-mail', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor(WAIT);
}
