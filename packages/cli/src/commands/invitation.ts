import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';
import { invitationOfferView, joinedView } from '../views/members.js';

export function register(invitation: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(invitation, 'band invitation accept https://band.example.com/invite/2bX…');

  withExamples(
    invitation
      .command('accept')
      .description('join a project through the invitation link someone sent you (signed in with the invited email)')
      .argument('<link>', 'the invitation link, or its token')
      .action(
        run(async (ctx, link: string) => {
          const client = await ctx.signedIn();
          const offer = await client.invitations.get(link);
          const accepted = await client.invitations.accept(link);
          ctx.out.done(accepted, () => joinedView(offer, accepted));
        }),
      ),
    'band invitation accept https://band.example.com/invite/2bX…',
  );

  withExamples(
    invitation
      .command('show')
      .description('what an invitation link offers: the project, who invited, the role and the expiry (no account needed)')
      .argument('<link>', 'the invitation link, or its token')
      .action(
        run(async (ctx, link: string) => {
          const offer = await ctx.anonymousClient().invitations.get(link);
          ctx.out.record(offer, () => invitationOfferView(offer));
        }),
      ),
    'band invitation show https://band.example.com/invite/2bX…',
  );
}
