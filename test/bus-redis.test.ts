import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { RedisBus } from '../src/infra/bus.js';
import { BUS_LOST, defineChannel } from '../src/infra/channels.js';
import { connectRedis } from '../src/infra/redis.js';
import { REDIS_URL, busCurrent } from './helpers.js';
import { missing } from './components.js';

const THING_CHANGED = defineChannel<{ id: number }>('thing.changed');

/** A bus of its own prefix on the test Redis, as one server process holds it; `subscriberId` is its subscribed connection's. */
async function withBus(
  run: (bus: RedisBus, subscriberId: number, publisher: ReturnType<typeof connectRedis>) => Promise<void>,
): Promise<void> {
  const publisher = connectRedis(REDIS_URL);
  const subscriber = publisher.duplicate();
  const subscriberId = Number(await subscriber.client('ID'));
  const bus = new RedisBus(publisher, subscriber, `gp:bus_${randomBytes(6).toString('hex')}:`);
  try {
    await run(bus, subscriberId, publisher);
  } finally {
    await bus.close();
    publisher.disconnect();
  }
}

test('a confirmed message has been handled by every receiver when publishing resolves', { skip: missing.redis }, () =>
  withBus(async (bus) => {
    const handled: unknown[] = [];
    bus.subscribe(THING_CHANGED, (message) => handled.push(message));
    await bus.ready([THING_CHANGED]);
    await bus.publishConfirmed(THING_CHANGED, { id: 7 });
    assert.deepEqual(handled, [{ id: 7 }]);
    // Plain messages still arrive as they are.
    const plain = new Promise((resolve) => bus.subscribe(THING_CHANGED, resolve));
    await bus.publish(THING_CHANGED, { id: 8 });
    assert.deepEqual(await plain, { id: 8 });
    assert.deepEqual(handled, [{ id: 7 }, { id: 8 }]);
  }),
);

test('the bus stops believing itself current when its connection drops, and says so', { skip: missing.redis }, () =>
  withBus(async (bus, subscriberId, publisher) => {
    await bus.ready([THING_CHANGED]);
    await busCurrent(bus);
    const lost = new Promise<boolean>((resolve) => bus.subscribe(BUS_LOST, () => resolve(bus.isCurrent())));
    await publisher.client('KILL', 'ID', String(subscriberId));
    assert.equal(await lost, false);
    // Once reconnected and its round trip answered, it is current again.
    await busCurrent(bus);
    const handled = new Promise((resolve) => bus.subscribe(THING_CHANGED, resolve));
    await bus.publishConfirmed(THING_CHANGED, { id: 9 });
    assert.deepEqual(await handled, { id: 9 });
  }),
);

test(
  'messages one process publishes without waiting reach another in the order they were published, across channels',
  { skip: missing.redis },
  async () => {
    const EVENTS = defineChannel<{ seq: number; id: number }>('thing.events');
    const prefix = `gp:bus_${randomBytes(6).toString('hex')}:`;
    const connections = Array.from({ length: 2 }, () => connectRedis(REDIS_URL));
    const [sending, receiving] = connections.map((publisher) => new RedisBus(publisher, publisher.duplicate(), prefix));
    try {
      const heard: string[] = [];
      const ROUNDS = 200;
      const all = new Promise<void>((resolve) => {
        const note = (entry: string) => {
          heard.push(entry);
          if (heard.length === 2 * ROUNDS) resolve();
        };
        receiving!.subscribe(THING_CHANGED, (message) => note(`changed ${message.id}`));
        receiving!.subscribe(EVENTS, (message) => note(`event ${message.id}`));
      });
      await receiving!.ready([THING_CHANGED, EVENTS]);
      const sent: Promise<unknown>[] = [];
      for (let id = 0; id < ROUNDS; id++) sent.push(sending!.publish(THING_CHANGED, { id }), sending!.publishSequenced(EVENTS, { id }));
      await Promise.all(sent);
      await all;
      assert.deepEqual(heard, Array.from({ length: ROUNDS }, (_, id) => [`changed ${id}`, `event ${id}`]).flat());
    } finally {
      for (const bus of [sending, receiving]) await bus!.close();
      for (const connection of connections) connection.disconnect();
    }
  },
);
