import { BandPromise } from '../band-promise.js';
import { imageFormOrJson } from '../multipart.js';
import type { FileInput } from '../upload-source.js';
import { ROUTES } from '../contract/routes.js';
import { routeMethods } from '../route-methods.js';
import type { RequestOptions } from '../transport.js';
import type {
  CreateProjectRequest,
  Deleted,
  InviteRequest,
  InviteResult,
  Member,
  Project,
  ProjectDetail,
  UpdatedProject,
  UpdateMemberRequest,
  UpdateProjectRequest,
} from '../types.js';

export interface CreateProjectInput extends CreateProjectRequest {
  /** A cover image (JPEG, PNG, GIF or WebP, at most 5 MiB): the request becomes multipart. */
  image?: FileInput;
}

export interface UpdateProjectInput extends Omit<UpdateProjectRequest, 'image'> {
  /** A new cover image, or null to remove the current one. */
  image?: FileInput | null;
}

/** Projects, their members and invitations; methods declared with `sdk: 'projects.…'` are made from their routes. */
export class ProjectsResource extends routeMethods('projects') {
  /** The caller's projects, newest first. */
  list(options?: RequestOptions): BandPromise<Project[]> {
    return this.transport.call(ROUTES.listProjects, {}, options);
  }

  create(input: CreateProjectInput, options?: RequestOptions): BandPromise<Project> {
    return BandPromise.from(async () => {
      const body = await imageFormOrJson({ name: input.name, description: input.description }, input.image);
      return this.transport.call(ROUTES.createProject, { body }, options).withResponse();
    });
  }

  get(id: string, options?: RequestOptions): BandPromise<ProjectDetail> {
    return this.transport.call(ROUTES.getProject, { params: { id } }, options);
  }

  update(id: string, input: UpdateProjectInput, options?: RequestOptions): BandPromise<UpdatedProject> {
    return BandPromise.from(async () => {
      const body = await imageFormOrJson({ name: input.name, description: input.description }, input.image);
      if (input.reviewPolicy === undefined) return this.transport.call(ROUTES.updateProject, { params: { id }, body }, options).withResponse();
      if (body.json) return this.transport.call(ROUTES.updateProject, { params: { id }, body: { json: { ...body.json, reviewPolicy: input.reviewPolicy } } }, options).withResponse();
      // A multipart form has no object field: the review policy follows the image in a JSON request of its own.
      await this.transport.call(ROUTES.updateProject, { params: { id }, body }, options);
      return this.transport.call(ROUTES.updateProject, { params: { id }, body: { json: { reviewPolicy: input.reviewPolicy } } }, options).withResponse();
    });
  }

  delete(id: string, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.deleteProject, { params: { id } }, options);
  }

  /**
   * Invites an email (project ADMIN): answers the invitation and its `inviteUrl`, the link to send to the
   * invitee, who joins by accepting it signed in with that email. Nobody is added before that.
   */
  invite(id: string, request: InviteRequest, options?: RequestOptions): BandPromise<InviteResult> {
    return this.transport.call(ROUTES.invite, { params: { id }, json: request }, options);
  }

  /** Revokes a pending invitation (project ADMIN): its link stops working. */
  revokeInvitation(id: string, invitationId: string, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.revokeInvitation, { params: { id, invitationId } }, options);
  }

  updateMember(id: string, userId: string, request: UpdateMemberRequest, options?: RequestOptions): BandPromise<Member> {
    return this.transport.call(ROUTES.setMemberRole, { params: { id, userId }, json: request }, options);
  }

  /** Removes a member (project ADMIN), or leaves the project when `userId` is the caller's own. */
  removeMember(id: string, userId: string, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.removeMember, { params: { id, userId } }, options);
  }
}
