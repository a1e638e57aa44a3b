import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_PARAM_DEPTH } from '../src/api/depth.js';
import { allMethods } from '../src/domains.js';
import { redactUrl } from '../src/infra/redact.js';
import { assertSaneAnswer, differences, nested, snapshot, type Secrets } from './fuzz-support.js';
import { startFuzzServer, type FuzzServer } from './fuzz-server.js';

// Every method, public and admin, with parameters nested past the depth limit and with
// parameter names written in percent-encoded spellings.

/** Secret values sent under names that only decode to a secret's name; none may reach the log. */
const ENCODED_SECRETS: [string, string][] = [
  ['pass%77ord', 'S3cret-one'],
  ['access%5Ftoken', 'S3cret-two'],
  ['ACCESS%5fTOKEN', 'S3cret-three'],
  ['pass%2577ord', 'S3cret-four'],
  ['%70%61%73%73%77%6f%72%64', 'S3cret-five'],
  ['refresh%5Ftoken%00', 'S3cret-six'],
  ['pass%E0%A4%A', 'S3cret-seven'],
  ['%', 'S3cret-eight'],
];

describe('fuzzing nesting depth and encoded parameter names on every method', () => {
  let fuzz: FuzzServer;
  let secrets: Secrets;
  before(async () => {
    fuzz = await startFuzzServer();
    secrets = await fuzz.target.restore();
  });
  after(() => fuzz.server.close());

  const credentialsFor = (admin: boolean): Record<string, string> =>
    admin ? { 'x-admin-key': secrets.adminKey } : { authorization: `Bearer ${secrets.userToken}` };

  for (const method of allMethods()) {
    test(`${method.name}: a parameter nested too deeply answers 2 and changes nothing`, async () => {
      const names = [...Object.keys(method.params.properties as object), 'extra'];
      for (const depth of [MAX_PARAM_DEPTH + 1, 5_000]) {
        for (const name of names) {
          const before = await snapshot(fuzz.target.db);
          const payload = `{${JSON.stringify(name)}:${nested(depth)}}`;
          const { status, text } = await fuzz.target.inject(
            {
              method: 'POST',
              url: `/api/${method.name}`,
              headers: { ...credentialsFor(method.auth === 'admin'), 'content-type': 'application/json' },
              payload,
            },
            '10.9.0.1',
          );
          const context = `for ${name} nested ${depth} deep`;
          const { code } = assertSaneAnswer(method, status, text, context);
          assert.equal(code, 2, `${context}: ${text.slice(0, 200)}`);
          assert.match(JSON.parse(text).description, /nested too deeply/, context);
          assert.doesNotMatch(text, /stack|Maximum call/i, context);
          assert.deepEqual(differences(before, await snapshot(fuzz.target.db)), [], context);
        }
      }
    });

    test(`${method.name}: percent-encoded parameter names are answered sanely and never logged with their values`, async () => {
      const query = ENCODED_SECRETS.map(([name, value]) => `${name}=${value}`).join('&');
      for (const verb of ['GET', 'POST'] as const) {
        const url = `/api/${method.name}?${query}`;
        const { status, text } = await fuzz.target.inject(
          {
            method: verb,
            url,
            headers: {
              ...credentialsFor(method.auth === 'admin'),
              ...(verb === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
            },
            payload: verb === 'POST' ? query : undefined,
          },
          '10.9.0.2',
        );
        assertSaneAnswer(method, status, text, `for ${verb} ${url}`);
        const logged = redactUrl(url);
        for (const [, value] of ENCODED_SECRETS) assert.ok(!logged.includes(value), `${value} is logged in ${logged}`);
      }
    });
  }
});
