import type { AuthResult } from '@bandcollab/sdk';
import type { Context } from '../../context.js';
import { defaultKeptView, signedInView } from '../../views/auth.js';

/** Stores the pair of a sign-in (register, login, login --web) and says who is signed in, where. */
export async function signedIn(ctx: Context, result: AuthResult, verb: string): Promise<void> {
  const { store, keptDefault } = await ctx.saveSignIn(result, { id: result.user.id, email: result.user.email, name: result.user.name });
  if (keptDefault !== undefined) ctx.out.notice(defaultKeptView(keptDefault, ctx.apiUrl));
  ctx.out.done(result.user, () => signedInView(verb, ctx.apiUrl, result.user, store.location));
}
