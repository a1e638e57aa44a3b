import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { World } from '../src/world/schema.js';

/**
 * The world-file format of src/world/schema.ts as a JSON Schema document, for editors and
 * other tools (a world file names it in `$schema`). Imports check the same schema, and the
 * references between entries besides.
 */
export function worldJsonSchema(): Record<string, unknown> {
  return { $schema: 'http://json-schema.org/draft-07/schema#', ...(JSON.parse(JSON.stringify(World)) as Record<string, unknown>) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const output = process.argv[2] ?? fileURLToPath(new URL('../worlds/world.schema.json', import.meta.url));
  writeFileSync(output, `${JSON.stringify(worldJsonSchema(), null, 2)}\n`);
  console.log(`wrote ${output}`);
}
