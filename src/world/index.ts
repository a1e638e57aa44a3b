// The world files (schema, import, export, the demo), as the operators and the composition root use them.
export { announceWorldImported } from './announce.js';
export { isShippedDemoWorld } from './demo.js';
export { exportWorld, itemProtoEntry } from './export.js';
export { importWorld, importWorldIfEmpty, isEmptyWorld, WorldError } from './import.js';
export type { ImportSummary } from './import.js';
export { World, WorldItemProto, WorldUser } from './schema.js';
