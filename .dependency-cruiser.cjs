// The layers of `src/`, bottom first, and the rules `npm run lint` checks against them
// (ARCHITECTURE.md explains each layer). A folder, or a file at the top of `src/`, may import
// only from its own place and the places below it. A new capability is one more name in the
// list: a domain goes into `domains` at the place its dependencies allow.
const layers = [
  // Open layers are toolkits of independent modules: each of their files is public. Every other
  // folder is used by the others only through its index.ts.
  { name: 'base', members: ['config.ts', 'infra'], open: true },
  { name: 'storage', members: ['db', 'mail'], open: true },
  // Members of an unordered layer may import each other (never in a cycle).
  { name: 'transport', members: ['api', 'operations', 'web'], open: true },
  {
    name: 'domains',
    // Each on the ones before it; one a line, so that a new one is a line of its own.
    members: [
      // identity, and the apps players sign in to with it
      'users',
      'auth',
      'accounts',
      'oauth',
      // the social graph and the live feed
      'friends',
      'realtime',
      // the catalogue, the chat and private messages
      'catalog',
      'chat',
      'messages',
      // items and the exchanges that move them (the market after promocodes)
      'inventory',
      'trades',
      'promocodes',
      'market',
      // the classic board game (its engine, src/game/engine/, imports nothing of src/)
      'game',
      // what finished games leave: the week's missions, the season's pass, the week's top
      'missions',
      // the lobby: rooms players gather in, which start the game's live games
      'rooms',
      // the home screen and the profile page, composed from the domains above
      'home',
    ],
    ordered: true,
  },
  { name: 'operators', members: ['world', 'admin'], ordered: true },
  { name: 'composition root', members: ['hooks.ts', 'domains.ts', 'app.ts', 'cli'] },
];

/**
 * The services container (`src/services.ts`) is the one exception: it names, as types only,
 * what the composition root hands every layer, so every layer may import it and it imports
 * nothing at run time.
 */
const container = 'services.ts';

const escape = (name) => name.replace(/[.]/g, '\\.');
const pathOf = (member) => (member.endsWith('.ts') ? `^src/${escape(member)}$` : `^src/${escape(member)}/`);

/** Every member with its rank: members of one unordered layer share a rank. */
const ranked = [];
let rank = 0;
for (const layer of layers) {
  for (const member of layer.members) {
    ranked.push({ member, layer: layer.name, rank });
    if (layer.ordered) rank += 1;
  }
  if (!layer.ordered) rank += 1;
}

const layerRules = ranked
  .map(({ member, layer, rank }) => {
    const above = ranked.filter((other) => other.rank > rank).map((other) => pathOf(other.member));
    if (above.length === 0) return undefined;
    return {
      name: `layer:${member}`,
      comment: `${member} (${layer}) imports only from itself and the layers below it (ARCHITECTURE.md)`,
      severity: 'error',
      from: { path: pathOf(member) },
      to: { path: above },
    };
  })
  .filter(Boolean);

const openMembers = layers.filter((layer) => layer.open).flatMap((layer) => layer.members);

const known = new Set(ranked.map(({ member }) => member).concat(container));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-cycle',
      comment: 'no import cycle between files under src/ (type-only uses of the services container aside)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaNot: `^src/${escape(container)}$` },
    },
    {
      name: 'public-face',
      comment: 'another folder is used only through its index.ts, its public face (each file of an open layer is public)',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/$1/', '^src/[^/]+/index\\.ts$', ...openMembers.map(pathOf)] },
    },
    {
      name: 'container-types-only',
      comment: 'the services container imports types only, so that every layer may import it',
      severity: 'error',
      from: { path: `^src/${escape(container)}$` },
      to: { dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'listed-layer',
      comment: 'every folder and top-level file of src/ has its place in the layer list of .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: [...known].map(pathOf) },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/db/migrations/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
