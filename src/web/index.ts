export { registerWebClient, CLIENT_DIR, CLIENT_ROUTES, CONTENT_SECURITY_POLICY } from './client.js';
export { registerDemoMedia, demoImage, DEMO_MEDIA_PATH } from './media.js';
