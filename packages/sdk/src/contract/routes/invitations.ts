// Invitations to a project: sending, revoking, viewing and accepting them, and the page an invitation link opens.
import { header, jsonAnswer, STRING } from '../openapi-fragments.js';
import { declareRoutes } from '../route-types.js';

export const INVITATION_ROUTES = declareRoutes({
  invite: {
    method: 'POST',
    path: '/api/projects/:id/invite',
    auth: 'write',
    params: { id: 'Project' },
    request: 'InviteRequest',
    response: 'InviteResult',
    status: 201,
    errors: ['FORBIDDEN','ALREADY_MEMBER'],
    errorNotes: {
      409: 'ALREADY_MEMBER: the email of a member',
    },
    tag: 'members',
    summary: 'Invite by email (ADMIN): a 30-day invitation link, to send to the invitee',
    description: 'The same answer whether or not the email has an account; nobody is added until the invitee accepts the link. Inviting a pending email again replaces its invitation (new link, role and 30 days; the old link stops working).',
    openapi: { responses: { 201: jsonAnswer('InviteResult', 'Created', { Location: header(STRING, "The project's path") }) } },
  },
  revokeInvitation: {
    method: 'DELETE',
    path: '/api/projects/:id/invitations/:invitationId',
    auth: 'write',
    params: { id: 'Project', invitationId: 'Invitation' },
    response: 'Deleted',
    status: 200,
    errors: ['FORBIDDEN'],
    tag: 'members',
    summary: 'Revoke a pending invitation (ADMIN): its link stops working',
    openapi: { responses: { 200: jsonAnswer('Deleted', 'Revoked; id is the invitation id') } },
  },
  viewInvitation: {
    method: 'GET',
    path: '/api/invitations/:token',
    auth: 'anonymous',
    params: { token: { uuid: false, description: 'The last path segment of the invitation link' } },
    response: 'InvitationView',
    status: 200,
    errors: ['NOT_FOUND'],
    errorNotes: {
      404: 'NOT_FOUND: unknown, revoked, used or expired',
    },
    tag: 'members',
    summary: 'What an invitation link offers, no authentication',
  },
  acceptInvitation: {
    method: 'POST',
    path: '/api/invitations/accept',
    auth: 'write',
    request: 'AcceptInvitationRequest',
    response: 'AcceptedInvitation',
    status: 200,
    errors: ['INVITATION_EMAIL_MISMATCH','INSUFFICIENT_SCOPE','NOT_FOUND','ALREADY_MEMBER'],
    errorNotes: {
      403: 'INVITATION_EMAIL_MISMATCH; or INSUFFICIENT_SCOPE: a personal access token limited to projects cannot join one',
      404: 'NOT_FOUND: unknown, revoked, used or expired',
      409: 'ALREADY_MEMBER',
    },
    tag: 'members',
    summary: "Accept an invitation link: the caller joins the project with the invitation's role",
    description: "The caller's email must equal the invitation's (case-insensitive), else 403 INVITATION_EMAIL_MISMATCH and the invitation stays pending. The invitation is used up, and the project hears member.added (the caller is its actor). A caller who already is a member gets 409 ALREADY_MEMBER, and the invitation is used up all the same.",
  },
});

/** The HTML page an invitation link opens. */
export const INVITATION_PAGES = declareRoutes({
  invitePage: {
    method: 'GET',
    path: '/invite/:token',
    auth: 'anonymous',
    params: { token: { uuid: false } },
    produces: 'html',
    status: 200,
    tag: 'members',
    summary: 'The HTML page of an invitation link: the project, who invited, the role, the expiry and how to accept',
  },
});
