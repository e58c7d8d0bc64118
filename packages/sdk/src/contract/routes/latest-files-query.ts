// `?latest=true`, shared by a cut (routes/cuts.ts) and the project detail (routes/projects.ts).
import { z } from 'zod';

/** `?latest=true` on a cut and the project detail: only the latest version of each series. */
export const latestFilesQuery = z.object({
  latest: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .optional()
    .meta({ description: 'true: only the latest version of each series' })
    .transform((value) => value === 'true'),
});
