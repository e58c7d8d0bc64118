// What the auth commands ask on a terminal: answers that must not be empty, new passwords (asked twice).
import type { Context } from '../../context.js';
import { usageError } from '../../exit-codes.js';
import { ask, askSecret, isInteractive } from '../../prompt.js';

export interface CredentialOptions {
  email?: string;
  passwordStdin?: boolean;
}

export async function askOrFail(ctx: Context, question: string, flag: string): Promise<string> {
  if (!isInteractive(ctx.io)) throw usageError(`${flag} is required when not on a terminal`);
  const answer = await ask(ctx.io, question);
  if (!answer) throw usageError(`${flag.slice(2)} must not be empty`);
  return answer;
}

/** The server's password rule (registerRequest in the contract), said before a new password is asked for. */
const PASSWORD_MIN_LENGTH = 8;
const PASSWORD_RULE = `A password needs at least ${PASSWORD_MIN_LENGTH} characters.`;

const REGISTER_PROMPTS = { first: 'Password: ', again: 'Password again: ' };
export const CHANGE_PROMPTS = { first: 'New password: ', again: 'Repeat the new password: ' };

/**
 * A new password on a terminal: the rule first, then asked until one keeps it (checked before it is asked
 * again, so a short one costs one answer, not two), and twice until both answers are the same.
 */
export async function askNewPassword(ctx: Context, prompts = REGISTER_PROMPTS): Promise<string> {
  if (!isInteractive(ctx.io)) throw usageError('--password-stdin is required when not on a terminal');
  ctx.out.info(PASSWORD_RULE);
  for (;;) {
    const password = await askSecret(ctx.io, prompts.first);
    if (password.length < PASSWORD_MIN_LENGTH) {
      ctx.out.error(`password: must be at least ${PASSWORD_MIN_LENGTH} characters`);
      continue;
    }
    if ((await askSecret(ctx.io, prompts.again)) === password) return password;
    ctx.out.error('the two passwords differ; once more');
  }
}
