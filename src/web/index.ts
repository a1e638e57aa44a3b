export { registerWebClient, CLIENT_DIR, CLIENT_ROUTES, CONTENT_SECURITY_POLICY } from './client.js';
