// The query strings of the comment lists (a file's, a cut's, a project's, a feedback link's) and of the comment
// export: shared by routes/comments.ts and routes/shares.ts. Every value arrives as text.
import { z } from 'zod';
import { MARKER_FORMATS } from '../comments.js';

const pageQuery = {
  status: z.enum(['open', 'resolved', 'all'], { error: 'must be open, resolved or all' }).default('all'),
  since: z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 time, such as 2026-11-21T10:00:00.000Z' })
    .transform((value) => new Date(value))
    .optional(),
  limit: z.coerce.number({ error: 'must be a number' }).int('must be an integer').min(1, 'must be 1 to 500').max(500, 'must be 1 to 500').default(200),
  cursor: z.string({ error: 'must be a string' }).optional(),
};
const versionsQuery = z.enum(['this', 'series'], { error: 'must be this or series' });

export const fileCommentsQuery = z.object({ ...pageQuery, versions: versionsQuery.default('series') });
export const sharedCommentsQuery = z.object(pageQuery);
export const inboxCommentsQuery = z.object({ ...pageQuery, mentions: z.literal('me', { error: 'must be me' }).optional() });

export const markerExportQuery = z.object({
  format: z.enum(MARKER_FORMATS, { error: `must be one of ${MARKER_FORMATS.join(', ')}` }),
  offsetMs: z.coerce.number({ error: 'must be a number' }).int('must be an integer').min(0, 'must be 0 or more').max(86_400_000, 'must be at most a day').default(0),
  status: z.enum(['open', 'all'], { error: 'must be open or all' }).default('all'),
  versions: versionsQuery.default('this'),
});
