import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { CATALOG_IDS, callFails, callOk, catalogWorld } from './item-fixtures.js';
import { CATALOG_CHANGED, WORLD_CHANGED } from '../src/infra/channels.js';

describe('data.getItemProtos', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ world: catalogWorld });
  });
  after(() => server.close());

  test('answers the known prototypes in request order, unknown ids left out, repeats answered once', async () => {
    const data = await callOk(server, 'data.getItemProtos', { item_proto_ids: '502,999,101,201,101' }, { http: 'GET' });
    assert.deepEqual(
      data.item_protos.map((p: any) => p.item_proto_id),
      [502, 101, 201],
    );
    assert.deepEqual(data.collections, [
      { collection_id: 1, title: 'Alpha' },
      { collection_id: 2, title: 'Beta' },
    ]);
  });

  test('shows every prototype field exactly, leaving out the ones without a value', async () => {
    const data = await callOk(server, 'data.getItemProtos', { item_proto_ids: '101,501,502,102,901,701' });
    const [card, caseProto, key, plain, subscription, sticker] = data.item_protos;
    assert.deepEqual(card, {
      item_proto_id: 101,
      type: 0,
      image: 'https://img.example/a1.png',
      title: 'Card A1',
      description: 'First card',
      quality_id: 1,
      collection_id: 1,
      monopoly_id: 1,
      prices: { buy: 5, quick_sell: 0.5 },
      twin_item_proto_ids: [102],
      can_craft: 1,
    });
    assert.deepEqual(caseProto, {
      item_proto_id: 501,
      type: 2,
      image: 'https://img.example/case.png',
      title: 'Case',
      description: '',
      quality_id: 1,
      collection_id: 2,
      prices: { quick_sell: 0.3 },
      key_item_proto_id: 502,
      drop: [
        { item_proto_id: 101, weight: 1, chance: 1 / 3 },
        { item_proto_id: 201, is_secondary: 1, weight: 1, chance: 1 / 3 },
        { item_proto_id: 301, is_rare: 1, weight: 1, chance: 1 / 3 },
      ],
    });
    assert.deepEqual(key, {
      item_proto_id: 502,
      type: 3,
      image: '',
      title: 'Key',
      description: '',
      quality_id: 1,
      prices: { buy: 33 },
      case_item_proto_ids: [501],
    });
    assert.deepEqual(plain, {
      item_proto_id: 102,
      type: 0,
      image: '',
      title: 'Card B1',
      description: '',
      quality_id: 1,
      collection_id: 1,
      monopoly_id: 2,
      can_craft: 1,
    });
    assert.deepEqual(subscription, {
      item_proto_id: 901,
      item_proto_status: 1,
      type: 7,
      image: '',
      title: 'Subscription',
      description: '',
      quality_id: 1,
    });
    assert.deepEqual(sticker, {
      item_proto_id: 701,
      type: 9,
      image: '',
      title: 'Sticker',
      description: '',
      quality_id: 1,
      sticker_group_id: 1,
      can_craft: 1,
    });
  });

  test('add_legacy = 1 adds the Thing fields', async () => {
    const data = await callOk(server, 'data.getItemProtos', { item_proto_ids: '101,502,901,701', add_legacy: 1 });
    const [card, key, subscription, sticker] = data.item_protos;
    assert.deepEqual(card, {
      item_proto_id: 101,
      type: 0,
      image: 'https://img.example/a1.png',
      title: 'Card A1',
      description: 'First card',
      quality_id: 1,
      collection_id: 1,
      monopoly_id: 1,
      prices: { buy: 5, quick_sell: 0.5 },
      twin_item_proto_ids: [102],
      can_craft: 1,
      thing_prototype_id: 101,
      thing_prototype_status: 0,
      thing_type: 0,
      quality: 1,
      group: 1,
      collection: 1,
      twin_thing_prototype_id: [102],
      delete_price: 0.5,
      can_be_upgraded: 1,
      buy_cost: 5,
    });
    assert.deepEqual(key, {
      item_proto_id: 502,
      type: 3,
      image: '',
      title: 'Key',
      description: '',
      quality_id: 1,
      prices: { buy: 33 },
      case_item_proto_ids: [501],
      thing_prototype_id: 502,
      thing_prototype_status: 0,
      thing_type: 3,
      quality: 1,
      collection: -1,
      buy_cost: 39,
      cases: [501],
    });
    assert.deepEqual(subscription, {
      item_proto_id: 901,
      item_proto_status: 1,
      type: 7,
      image: '',
      title: 'Subscription',
      description: '',
      quality_id: 1,
      thing_prototype_id: 901,
      thing_prototype_status: 1,
      thing_type: 7,
      quality: 1,
      collection: -1,
    });
    assert.deepEqual(sticker, {
      item_proto_id: 701,
      type: 9,
      image: '',
      title: 'Sticker',
      description: '',
      quality_id: 1,
      sticker_group_id: 1,
      can_craft: 1,
      thing_prototype_id: 701,
      thing_prototype_status: 0,
      thing_type: 9,
      quality: 1,
      sticker_group: 1,
      collection: -1,
      can_be_upgraded: 1,
    });
    const [caseProto] = (await callOk(server, 'data.getItemProtos', { item_proto_ids: '501', add_legacy: 1 })).item_protos;
    assert.deepEqual(caseProto, {
      item_proto_id: 501,
      type: 2,
      image: 'https://img.example/case.png',
      title: 'Case',
      description: '',
      quality_id: 1,
      collection_id: 2,
      prices: { quick_sell: 0.3 },
      key_item_proto_id: 502,
      drop: [
        { item_proto_id: 101, weight: 1, chance: 1 / 3 },
        { item_proto_id: 201, is_secondary: 1, weight: 1, chance: 1 / 3 },
        { item_proto_id: 301, is_rare: 1, weight: 1, chance: 1 / 3 },
      ],
      thing_prototype_id: 501,
      thing_prototype_status: 0,
      thing_type: 2,
      quality: 1,
      collection: 2,
      delete_price: 0.3,
      key: 502,
    });
  });

  test('description is always present and legacy fields only with add_legacy = 1, on every prototype', async () => {
    const ids = CATALOG_IDS.slice(0, 50).join(',');
    const plain = await callOk(server, 'data.getItemProtos', { item_proto_ids: ids });
    const legacy = await callOk(server, 'data.getItemProtos', { item_proto_ids: ids, add_legacy: 1 });
    assert.equal(plain.item_protos.length, CATALOG_IDS.length);
    const legacyNames = [
      'thing_prototype_id',
      'thing_prototype_status',
      'thing_type',
      'quality',
      'group',
      'sticker_group',
      'collection',
      'twin_thing_prototype_id',
      'delete_price',
      'can_be_upgraded',
      'buy_cost',
      'key',
      'cases',
    ];
    for (const [i, proto] of plain.item_protos.entries()) {
      const source = catalogWorld.item_protos!.find((p) => p.item_proto_id === proto.item_proto_id)!;
      assert.equal(proto.description, source.description ?? '');
      for (const name of legacyNames) assert.ok(!(name in proto), `${name} absent from ${proto.item_proto_id} without add_legacy`);
      for (const name of ['item_id', 'ts_owned', 'ts_can_trade', 'thing_id', 'owned_time', 'user_id'])
        assert.ok(!(name in proto) && !(name in legacy.item_protos[i]), `${name} is not a prototype field`);
      const withLegacy = legacy.item_protos[i];
      // The legacy answer is the plain one plus the Thing fields.
      assert.deepEqual(Object.fromEntries(Object.entries(withLegacy).filter(([name]) => !legacyNames.includes(name))), proto);
      assert.equal(withLegacy.thing_prototype_id, proto.item_proto_id);
      assert.equal(withLegacy.thing_type, proto.type);
      assert.equal(withLegacy.quality, proto.quality_id);
      assert.equal(withLegacy.collection, proto.collection_id ?? -1);
      assert.equal(withLegacy.group, proto.monopoly_id);
      assert.equal(withLegacy.sticker_group, proto.sticker_group_id);
      assert.equal(withLegacy.can_be_upgraded, proto.can_craft);
      assert.equal(withLegacy.delete_price, proto.prices?.quick_sell);
      assert.equal(withLegacy.key, proto.key_item_proto_id);
      assert.deepEqual(withLegacy.cases, proto.case_item_proto_ids);
      assert.deepEqual(withLegacy.twin_thing_prototype_id, proto.twin_item_proto_ids);
      assert.equal(withLegacy.thing_prototype_status, proto.item_proto_status ?? 0);
    }
  });

  test('add_metadata = 0 leaves out collections; none mentioned gives an empty list', async () => {
    const without = await callOk(server, 'data.getItemProtos', { item_proto_ids: '101', add_metadata: 0 });
    assert.deepEqual(Object.keys(without), ['item_protos']);
    const none = await callOk(server, 'data.getItemProtos', { item_proto_ids: '502,999' });
    assert.deepEqual(none, { item_protos: [none.item_protos[0]], collections: [] });
    const unknown = await callOk(server, 'data.getItemProtos', { item_proto_ids: '999' });
    assert.deepEqual(unknown, { item_protos: [], collections: [] });
  });

  test('at most 50 ids: 51 answers 6; missing or empty ids answer 2', async () => {
    const fifty = Array.from({ length: 50 }, (_, i) => i + 1);
    const data = await callOk(server, 'data.getItemProtos', { item_proto_ids: fifty.join(',') }, { http: 'GET' });
    assert.deepEqual(data.item_protos, []);
    await callFails(server, 'data.getItemProtos', { item_proto_ids: [...fifty, 101].join(',') }, 6);
    await callFails(server, 'data.getItemProtos', {}, 2);
    await callFails(server, 'data.getItemProtos', { item_proto_ids: '' }, 2);
    await callFails(server, 'data.getItemProtos', { item_proto_ids: '1,x' }, 2);
  });

  test('form-encoded bodies work as well', async () => {
    const data = await callOk(server, 'data.getItemProtos', { item_proto_ids: '201,101', add_metadata: '0' }, { form: true });
    assert.deepEqual(
      data.item_protos.map((p: any) => p.item_proto_id),
      [201, 101],
    );
  });
});

describe('data.searchItemProtos', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ world: catalogWorld });
  });
  after(() => server.close());

  const ids = (data: any) => data.item_protos.map((p: any) => p.item_proto_id);
  const search = (params: Record<string, unknown>) => callOk(server, 'data.searchItemProtos', params, { http: 'GET' });

  test('no filter pages through the whole catalogue in ascending id, 20 by default', async () => {
    const all = await search({ count: 50 });
    assert.deepEqual(ids(all), CATALOG_IDS);
    const first = await search({});
    assert.deepEqual(ids(first), CATALOG_IDS.slice(0, 20));
    const page = await search({ offset: 3, count: 4 });
    assert.deepEqual(ids(page), CATALOG_IDS.slice(3, 7));
    const tail = await search({ offset: CATALOG_IDS.length - 2, count: 5 });
    assert.deepEqual(ids(tail), CATALOG_IDS.slice(-2));
    const beyond = await search({ offset: CATALOG_IDS.length, count: 5 });
    assert.deepEqual(beyond, { item_protos: [], collections: [] });
    const none = await search({ count: 0 });
    assert.deepEqual(none, { item_protos: [], collections: [] });
  });

  test('count above 50 answers 6, 50 is accepted', async () => {
    await callFails(server, 'data.searchItemProtos', { count: 51 }, 6);
    await search({ count: 50 });
    await callFails(server, 'data.searchItemProtos', { count: -1 }, 2);
    await callFails(server, 'data.searchItemProtos', { offset: 'x' }, 2);
  });

  test('each filter alone', async () => {
    assert.deepEqual(ids(await search({ type: '0' })), [101, 102, 103, 201, 202, 203, 301, 801, 802, 951]);
    assert.deepEqual(ids(await search({ quality_id: '2' })), [201, 202, 203, 702]);
    assert.deepEqual(ids(await search({ collection_id: '1' })), [101, 102]);
    assert.deepEqual(ids(await search({ group_id: '2' })), [102, 202, 802]);
  });

  test('OR within one set', async () => {
    assert.deepEqual(ids(await search({ type: '2,3' })), [501, 502]);
    assert.deepEqual(ids(await search({ quality_id: '0,5' })), [801, 802, 951]);
    assert.deepEqual(ids(await search({ collection_id: '1,2' })), [101, 102, 201, 501]);
  });

  test('group_id matches monopoly_id or sticker_group_id', async () => {
    assert.deepEqual(ids(await search({ group_id: '1' })), [101, 103, 201, 203, 301, 701, 801, 951]);
    assert.deepEqual(ids(await search({ group_id: '7' })), [702]);
    assert.deepEqual(ids(await search({ group_id: '1', type: '9' })), [701]);
  });

  test('AND across parameters', async () => {
    assert.deepEqual(ids(await search({ quality_id: '1', type: '3', count: 3 })), [502]);
    assert.deepEqual(ids(await search({ type: '0', quality_id: '1,2', group_id: '2' })), [102, 202]);
    assert.deepEqual(ids(await search({ type: '0', collection_id: '2', quality_id: '2' })), [201]);
    assert.deepEqual(ids(await search({ type: '0', collection_id: '2', quality_id: '1' })), []);
    assert.deepEqual(ids(await search({ type: '0', quality_id: '1', group_id: '1', offset: 1, count: 1 })), [103]);
  });

  test('collections lists exactly the collections of the returned page', async () => {
    const first = await search({ type: '0', count: 2 });
    assert.deepEqual(first.collections, [{ collection_id: 1, title: 'Alpha' }]);
    const later = await search({ type: '0', offset: 3, count: 1 });
    assert.deepEqual(ids(later), [201]);
    assert.deepEqual(later.collections, [{ collection_id: 2, title: 'Beta' }]);
    const none = await search({ type: '4' });
    assert.deepEqual(none.collections, []);
    const without = await search({ type: '0', add_metadata: 0 });
    assert.equal(without.collections, undefined);
  });

  test('add_legacy = 1 adds the Thing fields, default 0 does not', async () => {
    const plain = await search({ type: '3' });
    assert.deepEqual(plain.item_protos, [
      {
        item_proto_id: 502,
        type: 3,
        image: '',
        title: 'Key',
        description: '',
        quality_id: 1,
        prices: { buy: 33 },
        case_item_proto_ids: [501],
      },
    ]);
    const legacy = await search({ type: '3', add_legacy: 1 });
    assert.deepEqual(legacy.item_protos, [
      {
        ...plain.item_protos[0],
        thing_prototype_id: 502,
        thing_prototype_status: 0,
        thing_type: 3,
        quality: 1,
        collection: -1,
        buy_cost: 39,
        cases: [501],
      },
    ]);
    const byId = await callOk(server, 'data.getItemProtos', { item_proto_ids: '502', add_legacy: 1 });
    assert.deepEqual(byId.item_protos, legacy.item_protos);
  });

  test('every combination of filters and paging agrees with a direct reading of the catalogue', async () => {
    const protos = catalogWorld.item_protos!;
    const values = {
      type: ['0', '9', '2,3', '5'],
      quality_id: ['1', '0,2', '4'],
      collection_id: ['1', '2,3', '3'],
      group_id: ['1', '2,7', '99'],
    } as const;
    const matches = (proto: (typeof protos)[number], name: keyof typeof values, value: string) => {
      const set = value.split(',').map(Number);
      if (name === 'type') return set.includes(proto.type);
      if (name === 'quality_id') return set.includes(proto.quality_id ?? 0);
      if (name === 'collection_id') return proto.collection_id !== undefined && set.includes(proto.collection_id);
      return (
        (proto.monopoly_id !== undefined && set.includes(proto.monopoly_id)) ||
        (proto.sticker_group_id !== undefined && set.includes(proto.sticker_group_id))
      );
    };
    const names = Object.keys(values) as (keyof typeof values)[];
    let combinations = 0;
    for (let mask = 0; mask < 1 << names.length; mask++) {
      const chosen = names.filter((_, i) => mask & (1 << i));
      // Every value of each chosen filter, the first value of the others in turn.
      for (const lead of chosen.length === 0 ? [undefined] : chosen)
        for (const value of lead === undefined ? [undefined] : values[lead]) {
          const params: Record<string, string> = {};
          for (const name of chosen) params[name] = name === lead ? value! : values[name][0];
          const expected = protos
            .filter((p) => chosen.every((name) => matches(p, name, params[name])))
            .map((p) => p.item_proto_id)
            .sort((a, b) => a - b);
          const label = JSON.stringify(params);
          assert.deepEqual(ids(await search({ ...params, count: 50 })), expected, label);
          // Pages of three cover the list exactly, each with the collections of its own prototypes.
          const paged: number[] = [];
          for (let offset = 0; offset <= expected.length; offset += 3) {
            const page = await search({ ...params, offset, count: 3 });
            assert.deepEqual(ids(page), expected.slice(offset, offset + 3), `${label} offset ${offset}`);
            const collectionIds = [
              ...new Set(
                ids(page)
                  .map((id: number) => protos.find((p) => p.item_proto_id === id)!.collection_id)
                  .filter((c: unknown) => c !== undefined),
              ),
            ].sort((a: any, b: any) => a - b);
            assert.deepEqual(
              page.collections.map((c: any) => c.collection_id),
              collectionIds,
              `${label} offset ${offset}`,
            );
            paged.push(...ids(page));
          }
          assert.deepEqual(paged, expected, label);
          combinations += 1;
        }
    }
    // The empty filter, and each value of each filter under every set of other filters: 1 + (4 + 3 + 3 + 3) * 2^3.
    assert.equal(combinations, 105);
  });

  test('an empty filter counts as not given; an invalid one answers 2', async () => {
    assert.deepEqual(ids(await search({ type: '', quality_id: '', count: 50 })), CATALOG_IDS);
    assert.deepEqual(ids(await search({ type: '9', group_id: '' })), [701, 702]);
    for (const name of ['type', 'quality_id', 'collection_id', 'group_id']) {
      await callFails(server, 'data.searchItemProtos', { [name]: 'x' }, 2);
      await callFails(server, 'data.searchItemProtos', { [name]: '1,,2' }, 2);
      await callFails(server, 'data.searchItemProtos', { [name]: '-1' }, 2);
    }
    await callFails(server, 'data.searchItemProtos', { add_legacy: 2 }, 2);
    await callFails(server, 'data.searchItemProtos', { add_metadata: 'yes' }, 2);
  });

  test('POST with JSON numbers works like GET', async () => {
    const data = await callOk(server, 'data.searchItemProtos', { type: 0, quality_id: '5' });
    assert.deepEqual(ids(data), [951]);
  });
});

describe('catalogue cache', () => {
  test('an answer asked again is the same text, whether built afresh or kept, and a kept one goes with a change', async () => {
    const server = await startTestServer({ world: catalogWorld });
    try {
      const ask = async (url: string) => (await server.app.inject({ method: 'GET', url })).payload;
      for (const url of ['/api/data.getItemProtos?item_proto_ids=502,101,901', '/api/data.searchItemProtos?type=0&count=3&add_legacy=1']) {
        const texts = [await ask(url), await ask(url), await ask(url)];
        assert.equal(texts[1], texts[0]);
        assert.equal(texts[2], texts[0]);
        assert.equal(JSON.parse(texts[0]).code, 0);
      }
      await server.db.kysely.updateTable('item_protos').set({ title: 'Renamed' }).where('item_proto_id', '=', 101).execute();
      await server.services.bus.publish(CATALOG_CHANGED, {});
      const after = JSON.parse(await ask('/api/data.getItemProtos?item_proto_ids=502,101,901'));
      assert.deepEqual(
        after.data.item_protos.map((p: any) => p.title),
        ['Key', 'Renamed', 'Subscription'],
      );
    } finally {
      await server.close();
    }
  });

  test('a change announced on the bus is visible on the next call', async () => {
    const server = await startTestServer({ world: catalogWorld });
    try {
      const before = await callOk(server, 'data.getItemProtos', { item_proto_ids: '101' });
      assert.equal(before.item_protos[0].title, 'Card A1');
      await server.db.kysely.updateTable('item_protos').set({ title: 'Renamed' }).where('item_proto_id', '=', 101).execute();
      await server.db.kysely
        .insertInto('item_protos')
        .values({ item_proto_id: 104, type: 0, quality_id: 1, title: 'New card', monopoly_id: 3 })
        .execute();
      await server.services.bus.publish(CATALOG_CHANGED, {});
      const after = await callOk(server, 'data.getItemProtos', { item_proto_ids: '101,104' });
      assert.deepEqual(
        after.item_protos.map((p: any) => p.title),
        ['Renamed', 'New card'],
      );
      assert.deepEqual((await callOk(server, 'data.searchItemProtos', { group_id: '3' })).item_protos.length, 1);

      await server.db.kysely.updateTable('collections').set({ title: 'Alpha 2' }).where('collection_id', '=', 1).execute();
      await server.services.bus.publish(WORLD_CHANGED, {});
      const renamed = await callOk(server, 'data.getItemProtos', { item_proto_ids: '101' });
      assert.deepEqual(renamed.collections, [{ collection_id: 1, title: 'Alpha 2' }]);
    } finally {
      await server.close();
    }
  });
});
