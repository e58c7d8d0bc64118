// How band shows personal access tokens to people (token, auth status).
import type { CreatedPersonalAccessToken, PersonalAccessToken } from '@bandcollab/sdk';
import { counted, formatTime, type Output } from '../render.js';

/** "all yours", or the names of the projects a token is limited to (ids of projects no longer yours). */
export function tokenProjects(projectIds: readonly string[] | null, names: ReadonlyMap<string, string>): string {
  return projectIds === null ? 'all yours' : projectIds.map((id) => names.get(id) ?? id).join(', ');
}

/** Said on stderr after the token itself went to stdout. */
export function createdTokenView(token: CreatedPersonalAccessToken): string {
  const limit = token.projectIds === null ? 'all your projects' : counted(token.projectIds.length, 'project');
  return (
    `Created token ${token.name} (${token.scope}, ${limit}, expires ${formatTime(token.expiresAt)}). ` +
    'It is not shown again: store it as a secret and use it as BAND_TOKEN.'
  );
}

export function tokenTable(out: Output, tokens: readonly PersonalAccessToken[], projectNames: ReadonlyMap<string, string>): string {
  return out.table(
    tokens,
    [
      { header: 'NAME', value: (t) => t.name },
      { header: 'HINT', value: (t) => t.tokenHint },
      { header: 'SCOPE', value: (t) => t.scope },
      { header: 'PROJECTS', value: (t) => tokenProjects(t.projectIds, projectNames) },
      { header: 'EXPIRES', value: (t) => formatTime(t.expiresAt) },
      { header: 'LAST USED', value: (t) => (t.lastUsedAt === null ? 'never' : formatTime(t.lastUsedAt)) },
      { header: 'ID', value: (t) => t.id },
    ],
    'No tokens: band token create <name> --expires 90d',
  );
}

export function revokedTokenView(token: PersonalAccessToken): string {
  return `Revoked token ${token.name} (${token.tokenHint})`;
}
