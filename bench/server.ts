/**
 * The server under test, for checkouts without the `game-platform serve` command:
 * the same createServer as production, listening on --port, with general rate limits off.
 */
import { parseArgs } from 'node:util';
import { createServer } from '../src/app.js';
import { defaultConfig } from '../src/config.js';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    port: { type: 'string' },
    'log-level': { type: 'string', default: 'warn' },
    'trust-proxy': { type: 'boolean', default: false },
  },
});

const config = {
  ...defaultConfig(),
  host: '127.0.0.1',
  port: Number(values.port ?? 0),
  databaseUrl: values.database ?? 'sqlite:./data/bench.db',
  secretKey: process.env.SECRET_KEY || undefined,
  rateLimit: false,
  // Every benchmark client connects from loopback.
  maxConnectionsPerIp: 1_000_000,
  trustProxy: values['trust-proxy'] ?? false,
  logLevel: values['log-level'] ?? 'warn',
};

const { app } = await createServer(config);
await app.listen({ host: config.host, port: config.port });
const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
