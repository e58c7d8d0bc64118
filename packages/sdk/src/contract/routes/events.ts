// The live events WebSocket.
import { declareRoutes } from '../route-types.js';

export const EVENT_ROUTES = declareRoutes({
  events: {
    method: 'GET',
    path: '/api/events',
    auth: 'read',
    cookie: true,
    status: 101,
    errors: ['VALIDATION_FAILED','FORBIDDEN','RATE_LIMITED'],
    tag: 'events',
    summary: "WebSocket (Upgrade: websocket): every event of the caller's projects",
    description: 'First message {type: "hello", userId, projectIds}; then ProjectEvent messages, in commit order, for the projects the user belongs to at that moment (member.added for the user adds a project, member.removed and project.deleted drop it after delivering that event; creating a project is a member.added of its creator). Events missed while disconnected are not replayed: reload after each hello. An event committed just before the hello may still arrive after it (delivery is at least once around the hello; every event carries its id). Credentials: Authorization: Bearer, the access_token cookie, or (browsers, which cannot set headers on a WebSocket) the subprotocols `bandcollab.v1, bandcollab.bearer.<base64url(token)>`, of which the server selects bandcollab.v1; that header is redacted from logs like Authorization. An Origin other than PUBLIC_URL or one of CORS_ORIGINS is refused (403); requests without Origin (non-browser clients) are allowed. The server pings every {EVENTS_HEARTBEAT_SECONDS} and drops a peer that misses a pong. Close codes: 4401 the session ended (logout, refresh-token reuse, end of its lifetime; a personal access token revoked or expired; do not reconnect); 1013 the client fell over 1 MiB behind; 1012 the server may have missed events (its LISTEN connection was re-established); 1001 the server is shutting down; 1011 internal error; 1008 the client sent a message (the stream takes none: clients only answer pings); 1009 a frame over 4 KiB. Reconnect with backoff on every code but 4401. A malformed handshake (after authentication) is 400 VALIDATION_FAILED, field "handshake". One session or personal access token may hold 16 open sockets and one user 32 (per server instance); past either, 429 RATE_LIMITED with Retry-After: 30.',
    openapi: {"responses":{"101":{"description":"Switching protocols","content":{"application/json":{"schema":{"$ref":"#/components/schemas/ProjectEvent"}}}}}},
  },
});
