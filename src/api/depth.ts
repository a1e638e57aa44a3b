import { badParam } from './errors.js';

/**
 * Deepest nesting of arrays and objects accepted in a parameter: a JSON body, or JSON text a
 * method reads from a parameter (a world file, an item prototype). Nothing the API takes comes
 * near it; values nested deeper are refused with code 2 before anything is done with them
 * (code that walks values recursively, validation and logging included, would run out of stack).
 */
export const MAX_PARAM_DEPTH = 32;

/** Whether `value` nests arrays or objects more than `max` levels deep (walked without recursion). */
export function nestedDeeperThan(value: unknown, max: number = MAX_PARAM_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node))
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

export const TOO_DEEP = `is nested too deeply (at most ${MAX_PARAM_DEPTH} levels of arrays and objects)`;

/** JSON text from parameter `name`, parsed: code 2 when it is not JSON or nests too deeply. */
export function parseJsonParam(name: string, text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badParam(name, 'is not valid JSON');
  }
  if (nestedDeeperThan(value)) throw badParam(name, TOO_DEEP);
  return value;
}
