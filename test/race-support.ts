import { DB_KIND, startTestServer, type StartOptions, type TestServer } from './helpers.js';
import { listen } from './transport-support.js';
import { missing } from './components.js';

/**
 * The servers of a race test, listening on real sockets. On PostgreSQL two processes share the
 * database and Redis, as a deployment runs them; SQLite serves one process, so both addresses
 * lead to it. `urls[i % 2]` spreads requests over the processes either way.
 */
export interface Processes {
  servers: TestServer[];
  urls: [string, string];
  close(): Promise<void>;
}

/** Whether a race test runs two processes (PostgreSQL) or one (SQLite). */
export const CLUSTERED = DB_KIND === 'postgres';

/** Only PostgreSQL's two processes need Redis; SQLite's one process runs without it when it is missing. */
export const needsRedis = CLUSTERED ? missing.redis : false;

/** `redis: false` runs SQLite's one process without Redis; PostgreSQL's processes always have it. */
export async function startProcesses(options: StartOptions): Promise<Processes> {
  const first = await startTestServer({ ...options, redis: CLUSTERED || options.redis !== false });
  const servers = [first];
  if (CLUSTERED) servers.push(await startTestServer({ config: options.config, redis: true, location: first.location, clock: first.clock }));
  const urls: string[] = [];
  for (const server of servers) urls.push(await listen(server));
  return {
    servers,
    urls: [urls[0]!, urls[urls.length - 1]!],
    async close() {
      for (const server of [...servers].reverse()) await server.close();
    },
  };
}

/** A caller of the API as a user (`tokenOf`), each request sent to the next process in turn; answers the parsed body. */
export function callsInTurn(processes: Processes, tokenOf: (userId: number) => string | undefined) {
  let sent = 0;
  return async (userId: number, method: string, params: Record<string, unknown>): Promise<any> => {
    const response = await fetch(`${processes.urls[sent++ % 2]}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenOf(userId)}` },
      body: JSON.stringify(params),
    });
    return response.json();
  };
}
