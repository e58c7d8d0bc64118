// The request schemas of the bandcollab API, shared by the server (which validates with them) and the
// SDK (whose request types are derived from them). This entry loads zod; `@bandcollab/sdk` does not.
export * from './fields.js';
export * from './file-types.js';
export * from './requests.js';
