import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { startTestServer } from './helpers.js';
import type { World } from '../src/world/schema.js';
import { missing } from './components.js';

/** The README's "API reference" section: its links, and its curl examples run as written against the demo world. */

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const demo = JSON.parse(readFileSync(new URL('../worlds/demo.json', import.meta.url), 'utf8')) as World;

function apiReferenceSection(): string {
  const start = readme.indexOf('\n## API reference\n');
  assert.ok(start >= 0, 'the README has an "API reference" section');
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

test('the README links to /docs and /openapi.json', () => {
  const section = apiReferenceSection();
  assert.match(section, /http:\/\/127\.0\.0\.1:8080\/docs\b/);
  assert.match(section, /http:\/\/127\.0\.0\.1:8080\/openapi\.json\b/);
});

test(
  'the README curl examples (a read, a sign-in, a craft, an opening, a promo code) answer code 0 against the demo world',
  { skip: missing.curl },
  async () => {
    const blocks = [...apiReferenceSection().matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
    assert.equal(blocks.length, 1, 'one shell block of examples');
    const script = blocks[0];
    assert.match(script, /\/api\/users\.get/);
    assert.match(script, /\/api\/auth\.signin/);
    assert.match(script, /\/api\/inventory\.craft/);
    assert.match(script, /\/api\/inventory\.open/);
    assert.match(script, /\/api\/wallet\.promocodeActivate/);

    const server = await startTestServer({ world: demo });
    try {
      await server.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = server.app.server.address() as AddressInfo;
      const examples = script.replaceAll('http://127.0.0.1:8080', `http://127.0.0.1:${port}`);
      // Each answer on a line of its own, without curl's progress meter; the commands stay as written.
      const prelude = 'set -eu\ncurl() { command curl -sS "$@"; echo; }\n';
      const { stdout } = await promisify(execFile)('bash', ['-c', prelude + examples], { timeout: 60_000 });
      const lines = stdout.trim().split('\n');
      assert.equal(lines.length, 5, stdout);

      const read = JSON.parse(lines[0]);
      assert.equal(read.code, 0, lines[0]);
      assert.deepEqual(
        read.data.map((u: { user_id: number; domain: string }) => [u.user_id, u.domain]),
        [
          [1, 'alice'],
          [2, 'bob'],
        ],
      );
      assert.ok(
        read.data.every((u: object) => !('nicks_old' in u)),
        'the short form',
      );

      const token = lines[1];
      assert.match(token, /^[A-Za-z0-9_-]{20,}$/, 'the sign-in printed an access token');

      const craft = JSON.parse(lines[2]);
      assert.equal(craft.code, 0, lines[2]);
      assert.equal(craft.data.item.quality_id, 2, 'a class-2 item came out');
      const inventory = await server.call('inventory.get', { add_legacy: 0 }, { token });
      const ids = new Set(inventory.body.data.items.map((item: { item_id: number }) => item.item_id));
      assert.ok(ids.has(craft.data.item.item_id));
      const crafted = /item_ids=([\d,]+)/.exec(script)?.[1].split(',').map(Number) ?? [];
      assert.equal(crafted.length, 10);
      for (const used of crafted) assert.ok(!ids.has(used), `item ${used} was used up`);

      const opened = JSON.parse(lines[3]);
      assert.equal(opened.code, 0, lines[3]);
      const [caseId, keyId] = [/item_id=(\d+)/.exec(script)![1], /key_item_id=(\d+)/.exec(script)![1]].map(Number);
      const box = demo.items!.find((i) => i.item_id === caseId)!;
      const caseProto = demo.item_protos!.find((p) => p.item_proto_id === box.item_proto_id)!;
      assert.equal(demo.items!.find((i) => i.item_id === keyId)!.item_proto_id, caseProto.key_item_proto_id);
      assert.equal(opened.data.items.length, 1);
      assert.ok(caseProto.drop!.some((d) => d.item_proto_id === opened.data.items[0].item_proto_id));
      const afterOpening = await server.call('inventory.get', { add_legacy: 0 }, { token });
      const owned = new Set(afterOpening.body.data.items.map((item: { item_id: number }) => item.item_id));
      assert.ok(owned.has(opened.data.items[0].item_id) && !owned.has(caseId) && !owned.has(keyId));

      const redeemed = JSON.parse(lines[4]);
      assert.equal(redeemed.code, 0, lines[4]);
      const code = demo.promocodes!.find((p) => p.code === /promocode=([\w-]+)/.exec(script)![1])!;
      assert.deepEqual(
        redeemed.data.items.map((i: { item_proto_id: number }) => i.item_proto_id),
        code.item_proto_ids,
      );
    } finally {
      await server.close();
    }
  },
);
