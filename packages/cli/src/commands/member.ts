import type { Role } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import { notFoundError, usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { confirm } from '../prompt.js';
import { withExamples } from '../render.js';
import { memberIn, projectDetail, projectId } from '../resolve.js';
import { inviteView, removedMemberView, revokedInvitationView, roleChangedView } from '../views/members.js';

export function register(member: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(member, 'band member invite ana@example.com --project Demo');

  withExamples(
    member
      .command('invite')
      .description('invite an email and print the link to send them: signed in with that email, they accept it (project ADMIN)')
      .argument('<email>', 'who to invite')
      .requiredOption('--project <project>', 'project id or name')
      .option('--role <role>', 'MEMBER or ADMIN', 'MEMBER')
      .action(
        run(async (ctx, email: string, options: { project: string; role: string }) => {
          const client = await ctx.signedIn();
          const result = await client.projects.invite(await projectId(client, options.project), { email, role: role(options.role) });
          ctx.out.record(result, () => inviteView(result));
        }),
      ),
    'band member invite ana@example.com --project Demo',
    'band member invite ben@example.com --project Demo --role ADMIN',
  );

  withExamples(
    member
      .command('revoke-invite')
      .description('revoke a pending invitation: its link stops working (project ADMIN)')
      .argument('<invitation>', 'the invited email, or the invitation id')
      .requiredOption('--project <project>', 'project id or name')
      .action(
        run(async (ctx, ref: string, options: { project: string }) => {
          const client = await ctx.signedIn();
          const detail = await projectDetail(client, options.project);
          const email = ref.trim().toLowerCase();
          const found = detail.invitations.find((i) => i.id === ref || i.email === email);
          if (!found) throw notFoundError(`no pending invitation for "${ref}" in project "${detail.name}"`);
          const revoked = await client.projects.revokeInvitation(detail.id, found.id);
          ctx.out.done(revoked, () => revokedInvitationView(found.email, detail.name));
        }),
      ),
    'band member revoke-invite ana@example.com --project Demo',
  );

  withExamples(
    member
      .command('role')
      .description("change a member's role (project ADMIN)")
      .argument('<member>', 'email, name or user id')
      .argument('<role>', 'MEMBER or ADMIN')
      .requiredOption('--project <project>', 'project id or name')
      .action(
        run(async (ctx, ref: string, newRole: string, options: { project: string }) => {
          const client = await ctx.signedIn();
          const detail = await projectDetail(client, options.project);
          const updated = await client.projects.updateMember(detail.id, memberIn(detail, ref).userId, { role: role(newRole) });
          ctx.out.done(updated, () => roleChangedView(updated, detail.name));
        }),
      ),
    'band member role ana@example.com ADMIN --project Demo',
  );

  withExamples(
    member
      .command('remove')
      .description('remove a member (project ADMIN), or leave a project by naming yourself')
      .argument('<member>', 'email, name or user id')
      .requiredOption('--project <project>', 'project id or name')
      .action(
        run(async (ctx, ref: string, options: { project: string }) => {
          const client = await ctx.signedIn();
          const detail = await projectDetail(client, options.project);
          const found = memberIn(detail, ref);
          await confirm(ctx.io, `Remove ${found.name} <${found.email}> from ${detail.name}?`, ctx.options.yes);
          const removed = await client.projects.removeMember(detail.id, found.userId);
          ctx.out.done(removed, () => removedMemberView(found.name, detail.name));
        }),
      ),
    'band member remove ana@example.com --project Demo',
    'band member remove me@example.com --project Demo --yes   # leave the project',
  );
}

function role(value: string): Role {
  const upper = value.toUpperCase();
  if (upper !== 'MEMBER' && upper !== 'ADMIN') throw usageError(`role must be MEMBER or ADMIN, not "${value}"`);
  return upper;
}
