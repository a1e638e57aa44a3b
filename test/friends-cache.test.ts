import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelationCache, type ViewerRelations } from '../src/friends/relation-cache.js';

const relations = (friendId: number): ViewerRelations => ({ kinds: new Map([[friendId, 1]]), blocked: new Set(), blockedBy: new Set() });

test('a load of relations that started before a change is not kept', () => {
  const cache = new RelationCache(() => 0, () => true);
  const before = cache.startFill();
  cache.invalidate([1]);
  cache.store(before, 1, relations(2));
  assert.equal(cache.get(1), undefined);
  const after = cache.startFill();
  cache.store(after, 1, relations(3));
  assert.deepEqual(cache.get(1), relations(3));
  // A change of anyone's relations voids every load in progress, not only that viewer's.
  const pending = cache.startFill();
  cache.invalidate([7]);
  cache.store(pending, 2, relations(1));
  assert.equal(cache.get(2), undefined);
  assert.deepEqual(cache.get(1), relations(3));
  cache.invalidate([1]);
  assert.equal(cache.get(1), undefined);
});

test('cached relations expire after 60 seconds and are not used while Redis is unreachable', () => {
  let now = 0;
  let connected = true;
  const cache = new RelationCache(() => now, () => connected);
  cache.store(cache.startFill(), 1, 'too_many');
  now = 59;
  assert.equal(cache.get(1), 'too_many');
  connected = false;
  assert.equal(cache.get(1), undefined);
  cache.store(cache.startFill(), 2, relations(1));
  connected = true;
  assert.equal(cache.get(2), undefined, 'nothing is stored while unreachable');
  now = 60;
  assert.equal(cache.get(1), undefined);
});
