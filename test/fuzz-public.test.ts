import { after, before, describe, test } from 'node:test';
import { allMethods } from '../src/domains.js';
import { FUZZ_SEED, fuzzMethod } from './fuzz-support.js';
import { startFuzzServer, type FuzzServer } from './fuzz-server.js';

// Every public method, new ones included, attacked with requests generated from its own
// parameter schema plus hostile values, in every encoding, with and without credentials.
const methods = allMethods().filter((m) => m.auth !== 'admin');

describe('fuzzing the public methods', () => {
  let fuzz: FuzzServer;
  before(async () => {
    fuzz = await startFuzzServer();
  });
  after(() => fuzz.server.close());

  methods.forEach((method, index) => {
    test(`${method.name}: sane answers, and refused calls change nothing`, () =>
      fuzzMethod(fuzz.target, method, fuzz.fixture, FUZZ_SEED + index));
  });
});
