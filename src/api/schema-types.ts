import { Type } from '@sinclair/typebox';

/** Building blocks of response schemas (the `data` of each method, published in the OpenAPI document). */
export const Bit = Type.Union([Type.Literal(0), Type.Literal(1)]);
/** A field the reference service sends only as 1 ("present as 1"); absent means 0. */
export const One = Type.Literal(1);
export const Uint = Type.Integer({ minimum: 0 });
export const Ts = Type.Integer({ minimum: -1, description: 'Unix time, seconds' });
export const Strict = { additionalProperties: false } as const;
