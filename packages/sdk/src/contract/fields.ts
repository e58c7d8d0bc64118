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

/** The C0 controls but TAB and LF, DEL and the C1 controls: never part of text a person wrote. */
const CONTROL_BUT_TAB_AND_LF = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/u;

/**
 * Every free-text field (comment bodies, review notes, descriptions): trimmed, CRLF read as LF, at most `max`
 * characters; TAB and LF are kept, every other control character and the bidirectional controls are refused
 * (PostgreSQL text cannot hold NUL; a terminal or a page must not be steered by a bandmate's text).
 */
export const textSchema = (max: number, { min = 0 }: { min?: number } = {}) =>
  z
    .string({ error: 'must be a string' })
    .transform((value) => value.replace(/\r\n/g, '\n').trim())
    .pipe(
      z
        .string()
        .min(min, 'must not be empty')
        .max(max, `must be at most ${max} characters`)
        .refine((value) => !CONTROL_BUT_TAB_AND_LF.test(value), 'must not contain control characters other than newline and tab')
        .refine((value) => !BIDI_CONTROLS.test(value), 'must not contain bidirectional control characters'),
    )
    .meta({ description: `Trimmed (CRLF read as LF), then ${min > 0 ? `${min}–` : 'at most '}${max} characters; newlines and tabs are kept, no other control characters, no bidirectional controls.` });

export const descriptionSchema = textSchema(2000)
  .nullable()
  .meta({ description: 'Trimmed (CRLF read as LF), at most 2000 characters; newlines and tabs are kept, no other control characters, no bidirectional controls. An empty string is stored as null.' });

/** Milliseconds into a file, as the database's integer column holds them (a time past 24 days is no take's). */
export const millisecondsSchema = z
  .int({ error: 'must be an integer (milliseconds)' })
  .min(0, 'must be 0 or more')
  .max(2_147_483_647, 'must be at most 2147483647');

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
