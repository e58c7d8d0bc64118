import type { AcceptedInvitation, InvitationView, InviteResult, Role } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { hashToken, randomToken } from '../core/tokens.js';
import { type Principal, requireEveryProject } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import type { Queryable, Sql } from '../core/database.js';
import { CONFIG, SQL } from '../core/di.js';
import { DomainError, notFound } from '../core/errors.js';
import { ProjectAccess } from '../core/project-access.js';
import { invitationMail } from '../email/messages.js';
import { Mailer } from '../email/mailer.js';
import { EventPublisher } from '../events/publisher.js';
import { ProjectsRepository } from '../projects/repository.js';

/** Who accepts an invitation: a signed-in user, or an account being registered in the same transaction. */
export interface Invitee {
  id: string;
  email: string;
  name: string;
}

const alreadyMember = () => new DomainError('ALREADY_MEMBER', 'This email belongs to a member of the project');
const invitationNotFound = () => notFound('Invitation');

/**
 * Invitations are links: whoever holds one and signs in with the invited email joins. An email
 * alone proves nothing (anyone can register any address), so nothing here looks at who has an account.
 */
@injectable()
export class InvitationsService {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(SQL) private readonly sql: Sql,
    @inject(ProjectsRepository) private readonly projects: ProjectsRepository,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(Mailer) private readonly mailer: Mailer,
  ) {}

  /** ADMIN. The same answer whether or not the email has an account; the link's token appears only here. */
  async invite(principal: Principal, projectId: string, input: { email: string; role: Role }): Promise<InviteResult> {
    const token = randomToken();
    const inviteUrl = this.inviteUrl(token);
    const { invitation, emailed } = await this.sql.begin(async (tx) => {
      await this.access.require(principal, 'project', projectId, 'ADMIN', tx);
      if (await this.projects.hasMemberWithEmail(tx, projectId, input.email)) throw alreadyMember();
      const invitation = await this.projects.upsertInvitation(tx, projectId, { ...input, invitedBy: principal.userId, tokenHash: hashToken(token) });
      const project = (await this.projects.findForUser(tx, projectId, principal.userId))!;
      // Queued with the invitation (sent after it commits, by a job): a mail that fails fails no invitation.
      const emailed = await this.mailer.queue(tx, {
        kind: 'invitation',
        to: invitation.email,
        ...invitationMail({ projectName: project.name, inviterName: principal.name, role: input.role, inviteUrl, expiresAt: new Date(invitation.expiresAt) }),
      });
      return { invitation, emailed };
    });
    return { status: 'invited', invitation, inviteUrl, emailed };
  }

  /** ADMIN. Revokes a pending invitation: its link stops working. */
  async revoke(principal: Principal, projectId: string, invitationId: string): Promise<void> {
    await this.sql.begin(async (tx) => {
      await this.access.require(principal, 'project', projectId, 'ADMIN', tx);
      if (!(await this.projects.deletePendingInvitation(tx, projectId, invitationId))) throw invitationNotFound();
    });
  }

  /** What a link offers, to whoever holds it; 404 once it is revoked, used or expired. */
  async view(token: string): Promise<InvitationView> {
    const found = await this.projects.findInvitationByToken(this.sql, hashToken(token));
    if (!found) throw invitationNotFound();
    return { projectName: found.projectName, invitedBy: { name: found.inviterName }, role: found.role, expiresAt: found.expiresAt.toISOString() };
  }

  /**
   * The caller joins through the link. A caller already a member gets 409 ALREADY_MEMBER, and the
   * invitation is used up all the same (it has nothing left to give).
   */
  async accept(principal: Principal, token: string): Promise<AcceptedInvitation> {
    requireEveryProject(principal, 'join projects');
    const invitee = { id: principal.userId, email: principal.email, name: principal.name };
    const accepted = await this.sql.begin((tx) => this.acceptAs(tx, invitee, token));
    if (accepted === 'already-member') throw alreadyMember();
    return accepted;
  }

  /**
   * Uses up the invitation behind `token` for `invitee` inside the caller's transaction. 404 when the link is
   * unknown, revoked, used or expired; 403 INVITATION_EMAIL_MISMATCH (nothing changes) when it was sent
   * to another email.
   */
  async acceptAs(tx: Queryable, invitee: Invitee, token: string): Promise<AcceptedInvitation | 'already-member'> {
    const invitation = await this.projects.findInvitationByToken(tx, hashToken(token), { forUpdate: true });
    if (!invitation) throw invitationNotFound();
    // Both emails are stored lower-cased: equal here means equal case-insensitively.
    if (invitation.email !== invitee.email) {
      throw new DomainError('INVITATION_EMAIL_MISMATCH', 'This invitation was sent to another email address; sign in with that one');
    }
    await this.projects.deleteInvitation(tx, invitation.id);
    const member = await this.projects.addMember(tx, invitation.projectId, invitee.id, invitation.role);
    if (!member) return 'already-member';
    await this.events.publish(tx, {
      type: 'member.added',
      projectId: invitation.projectId,
      actor: { id: invitee.id, name: invitee.name },
      data: { member },
    });
    return { projectId: invitation.projectId, member };
  }

  private inviteUrl(token: string): string {
    return `${this.config.publicUrl}/invite/${token}`;
  }
}
