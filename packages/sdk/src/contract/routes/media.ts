// The bytes of stored files, images and avatars by their stored names.
import { PRESIGNED_DOWNLOADS } from '../openapi-fragments.js';
import { declareRoutes } from '../route-types.js';

export const MEDIA_ROUTES = declareRoutes({
  mediaFile: {
    method: 'GET',
    path: '/uploads/files/:name',
    auth: 'read',
    cookie: true,
    params: { name: { uuid: false, examples: ["<id>.mp3"] } },
    produces: { bytes: 'inline; …' },
    status: 200,
    errors: ['NOT_FOUND'],
    tag: 'media',
    summary: 'The bytes inline for members (also HEAD), for audio elements to play and seek',
    description: PRESIGNED_DOWNLOADS,
  },
  mediaImage: {
    method: 'GET',
    path: '/uploads/images/:name',
    auth: 'read',
    cookie: true,
    params: { name: { uuid: false, examples: ["<uuid>.png"] } },
    produces: { bytes: 'inline; filename="<uuid>.<ext>"' },
    status: 200,
    errors: ['NOT_FOUND'],
    tag: 'media',
    summary: 'A project cover or vibe image, for members (also HEAD)',
  },
  mediaAvatar: {
    method: 'GET',
    path: '/uploads/avatars/:name',
    auth: 'read',
    cookie: true,
    params: { name: { uuid: false, examples: ["<uuid>.png"] } },
    produces: { bytes: 'inline; filename="<uuid>.<ext>"' },
    status: 200,
    errors: ['NOT_FOUND'],
    tag: 'media',
    summary: "A user's avatar, for any signed-in user (also HEAD)",
  },
});
