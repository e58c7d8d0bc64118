import { z } from 'zod';

const CONTROL_CHARACTERS = /\p{Cc}/u;
/**
 * The invisible characters that reorder the text around them (Unicode bidirectional controls: ALM, LRM, RLM,
 * the embeddings and overrides, the isolates): in a name they make `evil\u202Eavw.zip` read as `evilpiz.wav`.
 */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Missing is "is required"; any other type "must be a string". */
const requiredString = (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : 'must be a string');

/** Project, vibe, cut and display names: trimmed, 1–200 characters, no control characters, no bidirectional controls. */
export const nameSchema = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine((value) => !CONTROL_CHARACTERS.test(value), 'must not contain control characters')
  .refine((value) => !BIDI_CONTROLS.test(value), 'must not contain bidirectional control characters')
  .meta({ description: 'Trimmed, then 1–200 characters; no control characters, no bidirectional controls (U+061C, U+200E–F, U+202A–E, U+2066–9).' });

/**
 * The name of an uploaded file, however it arrives (a multipart part's file name, once the server dropped its
 * directories as RFC 7578 asks; a resumable upload's `filename`): a name by the rules above that names no
 * directory either. Its extension decides the file's type.
 */
export const fileNameSchema = z
  .string({ error: requiredString })
  .pipe(nameSchema)
  .refine((value) => !/[/\\]/.test(value), 'must be a file name without a directory (no / or \\)')
  .refine((value) => value !== '.' && value !== '..', 'must be a file name, not . or ..')
  .meta({ description: 'A name as above without / or \\; its extension decides the type.' });

export const descriptionSchema = z
  .string({ error: 'must be a string or null' })
  .max(2000, 'must be at most 2000 characters')
  // PostgreSQL text cannot hold NUL; other control characters (line breaks, tabs) are fine in a description.
  .refine((value) => !value.includes('\u0000'), 'must not contain NUL characters')
  .nullable()
  .meta({ description: 'No NUL character. An empty string is stored as null.' });

export const emailSchema = z
  .string({ error: 'must be a string' })
  .trim()
  .toLowerCase()
  .pipe(z.email('must be an email address').max(320, 'must be at most 320 characters'))
  .meta({ format: 'email', description: 'Case-insensitive' });

export const roleSchema = z.enum(['MEMBER', 'ADMIN'], { error: 'must be MEMBER or ADMIN' });

/**
 * A personal access token's scope (§11): `read` (GET, HEAD, the events stream), `write` (everything its owner may
 * do but reviews), `review` (what `read` may, plus approving, requesting changes and withdrawing a review: never
 * part of `write`, so a CI token that publishes cannot satisfy the release gate it waits for).
 */
export const tokenScopeSchema = z.enum(['read', 'write', 'review'], { error: 'must be read, write or review' });

/** Any 8-4-4-4-12 hex id, for paths and token claims (uuidSchema, for bodies, also checks version and variant). */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** Lower-cased, as the server answers path ids, so ids compare equal whichever case a client sent. */
export const uuidSchema = z.uuid({ error: 'must be a UUID' }).transform((id) => id.toLowerCase());

/** The token of an invitation link, as a body field (the server's are 43 characters). */
export const inviteTokenSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .meta({ description: 'The token of an invitation link (its last path segment)' });

/** An image field in JSON: only `null` (clear it); a new image is sent as multipart/form-data. */
export const clearImageField = z.null({ error: 'must be null (send a new image as multipart/form-data)' }).optional();

/** An empty description (as a form sends it) is no description. */
export const optionalDescription = descriptionSchema.optional().transform((value) => (value === '' ? null : value));
