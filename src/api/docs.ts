import type { FastifyInstance } from 'fastify';
import scalarApiReference from '@scalar/fastify-api-reference';
import type { AnyMethod } from './method.js';
import { buildOpenApiDocument } from './openapi.js';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/**
 * Serves the OpenAPI document at /openapi.json and a browsable, searchable reference built
 * from it at /docs. The reference page loads only from this server: the plugin serves
 * Scalar's bundled script itself, and the web fonts it would fetch are turned off.
 */
export async function registerDocs(app: FastifyInstance, methods: AnyMethod[]): Promise<void> {
  let document: string | undefined;
  app.get(OPENAPI_PATH, async (_request, reply) => {
    // Built on first use: the method list is fixed once the server is assembled.
    document ??= JSON.stringify(buildOpenApiDocument(methods));
    return reply.type('application/json; charset=utf-8').header('access-control-allow-origin', '*').send(document);
  });

  await app.register(scalarApiReference, {
    routePrefix: DOCS_PATH,
    logLevel: 'warn',
    configuration: {
      url: OPENAPI_PATH,
      pageTitle: 'Game Platform API reference',
      withDefaultFonts: false,
      telemetry: false,
      agent: { disabled: true },
      showDeveloperTools: 'never',
      documentDownloadType: 'json',
      hideClientButton: false,
      defaultOpenAllTags: true,
    },
  });
}
