// The Node build: the web build's exports (web.ts; its modules resolve here to the Node ones, not their `.web.ts`
// swaps) and these.
export * from './web.js';
export { FileResumeStore, RESUMABLE_MIN_BYTES, type ResumeStore } from './resumable.js';
export { verifyWebhook, WebhookVerificationError, type WebhookPayload } from './verify-webhook.js';
