import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { connect, type PeerCertificate } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { DB_KIND, newDatabaseLocation, processDatabaseEnv, startTestServer } from './helpers.js';
import { openDatabase } from '../src/db/connection.js';
import { missing } from './components.js';
import { MailCatcher, mailConfig, tokenIn } from './mail-support.js';

const root = join(import.meta.dirname, '..');

interface Certificate {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made by openssl. */
function makeCertificate(dir: string, name: string): Certificate {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile };
}

/** GET over HTTPS, trusting only `ca`: status, body and the certificate the server presented. */
function httpsGet(url: string, ca: string): Promise<{ status: number; body: string; peer: PeerCertificate }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false }, (res) => {
      const peer = (res.socket as import('node:tls').TLSSocket).getPeerCertificate();
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, peer }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The certificate a TLS handshake with host:port presents (verified against `ca`). */
function presented(port: number, ca: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const peer = socket.getPeerCertificate();
      socket.end();
      resolve(peer);
    });
    socket.on('error', reject);
  });
}

test('with TLS and no --public-url, links in e-mail use https', { skip: missing.openssl }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gp-tls-'));
  const certificate = makeCertificate(dir, 'mail');
  const mail = await MailCatcher.start();
  const server = await startTestServer({
    config: {
      ...mailConfig(mail),
      host: '127.0.0.1',
      port: 8443,
      accounts: { signup: 'open' },
      tls: { certFile: certificate.certFile, keyFile: certificate.keyFile },
    },
  });
  try {
    const answer = await server.call('auth.signup', { email: 'tls@example.com', password: 'a long enough secret', nick: 'Tls' });
    assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
    const message = await mail.next('tls@example.com');
    const link = `https://127.0.0.1:8443/confirm-email?token=${tokenIn(message)}`;
    assert.ok(message.text.includes(link), message.text);
  } finally {
    await server.close();
    await mail.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--tls-cert and --tls-key serve HTTPS and WSS to a client that verifies the certificate', { skip: missing.openssl }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gp-tls-'));
  const certificate = makeCertificate(dir, 'first');
  const server = await startTestServer({ config: { tls: { certFile: certificate.certFile, keyFile: certificate.keyFile } } });
  try {
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = server.app.server.address() as import('node:net').AddressInfo;
    const answer = await httpsGet(`https://127.0.0.1:${port}/api/gchat.get`, certificate.cert);
    assert.equal(answer.status, 200);
    assert.equal(JSON.parse(answer.body).code, 0);
    assert.equal(answer.peer.subject.CN, 'first');

    // Plain HTTP on the same port is not served.
    await assert.rejects(async () => {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      await response.text();
    });
    // A client that does not trust the certificate refuses it.
    await assert.rejects(
      httpsGet(`https://127.0.0.1:${port}/healthz`, makeCertificate(dir, 'stranger').cert),
      /self[- ]signed|unable to verify|certificate/i,
    );

    const socket = new WebSocket(`wss://127.0.0.1:${port}/ws?subs=gchat&format=json`, { ca: certificate.cert });
    const ready = await new Promise<{ event: string }>((resolve, reject) => {
      socket.once('message', (data) => resolve(JSON.parse(String(data))));
      socket.once('error', reject);
    });
    assert.equal(ready.event, 'ready');
    socket.close();
    await new Promise((resolve) => socket.once('close', resolve));
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'serve reads the certificate again on SIGHUP; a broken pair leaves the one in use',
  { timeout: 120_000, skip: missing.openssl },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gp-tls-'));
    const first = makeCertificate(dir, 'first');
    const second = makeCertificate(dir, 'second');
    const live = { certFile: join(dir, 'live.crt'), keyFile: join(dir, 'live.key') };
    copyFileSync(first.certFile, live.certFile);
    copyFileSync(first.keyFile, live.keyFile);
    const location = await newDatabaseLocation();
    if (DB_KIND === 'postgres')
      await (await openDatabase(location.url, { schema: location.schema, secretKey: location.secretKey })).close();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'serve', '--port', '0', '--tls-cert', live.certFile, '--tls-key', live.keyFile],
      {
        cwd: root,
        env: { ...process.env, ...processDatabaseEnv(location) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const waitFor = async (pattern: RegExp) => {
      for (let i = 0; i < 1200 && !pattern.test(output); i++) await new Promise((r) => setTimeout(r, 100));
      const match = pattern.exec(output);
      assert.ok(match, `the server printed ${pattern}; it printed:\n${output}`);
      return match;
    };
    try {
      const [, port] = await waitFor(/listening on https:\/\/127\.0\.0\.1:(\d+)/);
      assert.equal((await presented(Number(port), first.cert)).subject.CN, 'first');

      copyFileSync(second.certFile, live.certFile);
      copyFileSync(second.keyFile, live.keyFile);
      child.kill('SIGHUP');
      await waitFor(/"msg":"TLS certificate reloaded"/);
      assert.equal((await presented(Number(port), second.cert)).subject.CN, 'second');

      // A certificate whose key does not match is refused; the server keeps the second one.
      copyFileSync(first.certFile, live.certFile);
      child.kill('SIGHUP');
      await waitFor(/TLS certificate not reloaded/);
      assert.equal((await presented(Number(port), second.cert)).subject.CN, 'second');
      const answer = await httpsGet(`https://localhost:${port}/healthz`, second.cert);
      assert.equal(answer.status, 200);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await location.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
