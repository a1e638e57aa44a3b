/**
 * Idle realtime subscribers: opens the requested number of WebSocket connections to the
 * server, keeps them open without sending anything, and closes them when told.
 */
import WebSocket from 'ws';

interface OpenJob {
  url: string;
  count: number;
  /** Connections opening at the same time. */
  parallel: number;
}

const sockets: WebSocket[] = [];

/** Each subscriber comes from an address of its own (the server trusts one proxy's X-Forwarded-For). */
const addressOf = (n: number) => `10.203.${(n >> 8) & 255}.${n & 255}`;

function openOne(url: string, n: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: 30_000, headers: { 'x-forwarded-for': addressOf(n) } });
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
  });
}

async function open(job: OpenJob): Promise<{ opened: number; failed: number; error?: string; closedEarly: number }> {
  let opened = 0;
  let failed = 0;
  let error: string | undefined;
  let closedEarly = 0;
  let next = 0;
  const worker = async () => {
    while (next < job.count) {
      const n = ++next;
      try {
        const socket = await openOne(job.url, n);
        socket.on('close', () => closedEarly++);
        socket.on('error', () => undefined);
        sockets.push(socket);
        opened++;
      } catch (e) {
        failed++;
        error ??= String(e);
        if (failed > 50 && opened === 0) return;
      }
    }
  };
  await Promise.all(Array.from({ length: job.parallel }, worker));
  return { opened, failed, error, closedEarly };
}

process.on('message', (message: { open?: OpenJob; status?: true; close?: true }) => {
  if (message.open) open(message.open).then((result) => process.send!({ result }));
  if (message.status) process.send!({ status: { open: sockets.filter((s) => s.readyState === WebSocket.OPEN).length } });
  if (message.close) {
    for (const socket of sockets) socket.terminate();
    process.send!({ closed: true });
  }
});
process.send!({ ready: true });
