// How band shows a project's members and invitations to people (member, invitation).
import type { AcceptedInvitation, InvitationView, InviteResult, Member } from '@bandcollab/sdk';
import { formatTime } from '../render.js';

export function inviteView(result: InviteResult): string {
  const { invitation } = result;
  if (result.emailed) {
    return `Emailing the invitation to ${invitation.email} (join as ${invitation.role} until ${formatTime(invitation.expiresAt)} UTC); should it not arrive, send them this link:\n${result.inviteUrl}`;
  }
  return `Send this link to ${invitation.email}; it lets them join as ${invitation.role} until ${formatTime(invitation.expiresAt)} UTC:\n${result.inviteUrl}`;
}

export function revokedInvitationView(email: string, project: string): string {
  return `Revoked the invitation of ${email} to ${project}`;
}

export function roleChangedView(member: Member, project: string): string {
  return `${member.name} is now ${member.role} of ${project}`;
}

export function removedMemberView(name: string, project: string): string {
  return `Removed ${name} from ${project}`;
}

export function invitationOfferView(offer: InvitationView): string {
  return `${offer.projectName}: ${offer.invitedBy.name} invites you as ${offer.role}, until ${formatTime(offer.expiresAt)} UTC`;
}

export function joinedView(offer: InvitationView, accepted: AcceptedInvitation): string {
  return `Joined ${offer.projectName} as ${accepted.member.role}`;
}
