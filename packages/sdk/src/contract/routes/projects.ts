// Projects and their members.
import { jsonAnswer } from '../openapi-fragments.js';
import { declareRoutes } from '../route-types.js';
import { latestFilesQuery } from './latest-files-query.js';

export const PROJECT_ROUTES = declareRoutes({
  listProjects: {
    method: 'GET',
    path: '/api/projects',
    auth: 'read',
    response: 'Project[]',
    status: 200,
    tag: 'projects',
    summary: "The caller's projects, newest first",
  },
  createProject: {
    method: 'POST',
    path: '/api/projects',
    auth: 'write',
    request: 'CreateProjectRequest',
    form: 'CreateProjectForm',
    response: 'Project',
    status: 201,
    errors: ['INSUFFICIENT_SCOPE','INSUFFICIENT_STORAGE','QUOTA_EXCEEDED'],
    errorNotes: {
      403: 'INSUFFICIENT_SCOPE: a personal access token limited to projects cannot create one',
    },
    tag: 'projects',
    summary: 'Create a project; the caller becomes its ADMIN',
  },
  getProject: {
    method: 'GET',
    path: '/api/projects/:id',
    auth: 'read',
    params: { id: 'Project' },
    query: latestFilesQuery,
    response: 'ProjectDetail',
    status: 200,
    tag: 'projects',
    summary: 'Project detail',
    description: 'Every vibe with its cuts and their files (every version of each series); `?latest=true` lists only the latest version of each series.',
  },
  updateProject: {
    method: 'PUT',
    path: '/api/projects/:id',
    auth: 'write',
    params: { id: 'Project' },
    request: 'UpdateProjectRequest',
    form: 'UpdateProjectForm',
    response: 'UpdatedProject',
    status: 200,
    errors: ['FORBIDDEN','INSUFFICIENT_STORAGE','QUOTA_EXCEEDED'],
    tag: 'projects',
    summary: 'Update name, description or image (ADMIN); JSON image: null clears the image',
  },
  deleteProject: {
    method: 'DELETE',
    path: '/api/projects/:id',
    auth: 'write',
    params: { id: 'Project' },
    response: 'Deleted',
    status: 200,
    errors: ['FORBIDDEN'],
    tag: 'projects',
    summary: 'Move the project with its vibes, cuts, files and images to the trash (ADMIN); for good, on disk too, when {TRASH_RETENTION_DAYS} is 0',
  },
});

/** A project's members (inviting them is invitations.ts). */
export const MEMBER_ROUTES = declareRoutes({
  setMemberRole: {
    method: 'PUT',
    path: '/api/projects/:id/members/:userId',
    auth: 'write',
    params: { id: 'Project', userId: { noun: 'Member', description: 'Member user id' } },
    request: 'UpdateMemberRequest',
    response: 'Member',
    status: 200,
    errors: ['FORBIDDEN','LAST_ADMIN'],
    errorNotes: {
      409: 'LAST_ADMIN',
    },
    tag: 'members',
    summary: "Change a member's role (ADMIN); the last ADMIN cannot be demoted",
  },
  removeMember: {
    method: 'DELETE',
    path: '/api/projects/:id/members/:userId',
    auth: 'write',
    params: { id: 'Project', userId: { noun: 'Member', description: 'Member user id' } },
    response: 'Deleted',
    status: 200,
    errors: ['FORBIDDEN','LAST_ADMIN'],
    errorNotes: {
      409: 'LAST_ADMIN',
    },
    tag: 'members',
    summary: 'Remove a member (ADMIN), or leave (the member themselves); the last ADMIN cannot be removed',
    openapi: { responses: { 200: jsonAnswer('Deleted', 'Removed; id is the user id') } },
  },
});
