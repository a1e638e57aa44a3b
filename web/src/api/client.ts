import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

/** An error answer of a method: its code and the server's description. */
export class ApiFailure extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly data?: unknown,
  ) {
    super(`${code}: ${description}`);
  }
}

let currentToken: () => string | undefined = () => undefined;

/** Where the client finds the access token to send. */
export function useAccessToken(source: () => string | undefined): void {
  currentToken = source;
}

const bearer: Middleware = {
  onRequest({ request }) {
    const token = currentToken();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
};

/** The typed client of every method, generated from the server's OpenAPI document. */
export const api = createClient<paths>({ baseUrl: '' });
api.use(bearer);

type Envelope = { code: number; description?: string; data?: unknown };

/** The data of a successful answer; an error answer (or none) throws ApiFailure. */
export async function ok<E extends Envelope>(
  call: Promise<{ data?: E; error?: unknown; response: Response }>,
): Promise<Extract<E, { code: 0 }>> {
  let answer: { data?: E; error?: unknown; response: Response };
  try {
    answer = await call;
  } catch {
    throw new ApiFailure(-1, 'network');
  }
  const envelope = (answer.data ?? answer.error) as Envelope | undefined;
  if (!envelope || typeof envelope.code !== 'number') throw new ApiFailure(-1, `HTTP ${answer.response.status}`);
  if (envelope.code !== 0) throw new ApiFailure(envelope.code, envelope.description ?? '', envelope.data);
  return envelope as Extract<E, { code: 0 }>;
}
