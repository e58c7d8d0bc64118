// The discord and slack formats (§19): a readable line instead of the signed JSON, naming what happened, who
// did it and a link, with everything a user wrote defused: no @everyone/@here, role, user or channel mention
// and no masked link can fire from a name or a comment, and comment bodies are cut at 300 characters.
import type { WebhookFormat } from '@bandcollab/sdk/contract';

const MAX_QUOTED = 300;

interface StandardBody {
  type: string;
  data: { projectId?: string; actor?: { name?: string }; data?: Record<string, unknown> };
}

/** The chat message for a stored standard body, as the bytes to send. */
export function chatBody(format: Exclude<WebhookFormat, 'standard'>, standard: string, appUrl: string): string {
  const { type, data } = JSON.parse(standard) as StandardBody;
  const defuse = format === 'discord' ? defuseDiscord : defuseSlack;
  const actor = data.actor?.name ? defuse(data.actor.name) : 'Someone';
  const named = namesIn(data.data ?? {}).map((name) => defuse(name));
  const comment = commentBody(data.data ?? {});
  const link = data.projectId ? `${appUrl}/projects/${data.projectId}` : appUrl;
  const parts = [`${actor}: ${type}${named.length > 0 ? ` (${named.join(' / ')})` : ''}`];
  if (comment !== null) parts.push(`> ${defuse(cut(comment))}`);
  parts.push(format === 'discord' ? `<${link}>` : `<${link}|Open in bandcollab>`);
  const text = parts.join('\n');
  return JSON.stringify(format === 'discord' ? { content: text, allowed_mentions: { parse: [] } } : { text });
}

/** The names of the records an event carries (project, vibe, cut, file, version), outermost first. */
function namesIn(data: Record<string, unknown>): string[] {
  const names: string[] = [];
  for (const key of ['project', 'vibe', 'cut', 'file']) {
    const record = data[key];
    if (record && typeof record === 'object' && typeof (record as { name?: unknown }).name === 'string') names.push((record as { name: string }).name);
  }
  if (typeof data.name === 'string') names.push(data.name);
  return names;
}

function commentBody(data: Record<string, unknown>): string | null {
  const comment = data.comment;
  if (comment && typeof comment === 'object' && typeof (comment as { body?: unknown }).body === 'string') return (comment as { body: string }).body;
  return null;
}

const cut = (text: string): string => ([...text].length > MAX_QUOTED ? `${[...text].slice(0, MAX_QUOTED - 1).join('')}…` : text);

/** Discord: `allowed_mentions` already stops pings; the text is defused too, so a quote never reads as one or as a masked link. */
function defuseDiscord(text: string): string {
  return text
    .replace(/@(everyone|here)/gi, '@\u200b$1')
    .replace(/<(@[!&]?|#)(\d+)>/g, '<\u200b$1$2>')
    .replace(/[[\]()]/g, (char) => `\\${char}`);
}

/** Slack: &, < and > escaped, as its API asks, so no <!everyone>, <@U…> or <url|text> survives; bare @channel words broken. */
function defuseSlack(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/@(everyone|here|channel)/gi, '@\u200b$1');
}
