import { readFileSync } from 'node:fs';

/** The demo world shipped with the server, found from src/world and dist/world alike. */
const SHIPPED_DEMO_WORLD = new URL('../../worlds/demo.json', import.meta.url);

/** Whether a world file is the shipped demo world, byte for byte: the only one whose passwords are public (the README's). */
export function isShippedDemoWorld(path: string): boolean {
  try {
    return readFileSync(path).equals(readFileSync(SHIPPED_DEMO_WORLD));
  } catch {
    return false;
  }
}
