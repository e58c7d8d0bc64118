// A CI job publishing a mix: uploads a file to a project / vibe / cut (created when missing), shares it,
// and prints the share link (also to $GITHUB_OUTPUT as `share_url` when that is set).
//
//   BAND_API_URL=https://band.example.com BAND_TOKEN=bcp_… \
//     node publish-mix.mjs ./build/mix.wav --project "Second album" --vibe "Singles" --cut "Lullaby" [--expires-in 604800]
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BandApiError, BandClient, BandNetworkError } from '@bandcollab/sdk';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    project: { type: 'string' },
    vibe: { type: 'string', default: 'Mixes' },
    cut: { type: 'string' },
    name: { type: 'string' },
    'expires-in': { type: 'string' },
  },
});
const [file] = positionals;
// A personal access token (band token create … --scope write) keeps the password out of CI; BAND_EMAIL and
// BAND_PASSWORD still work.
const { BAND_API_URL: baseUrl, BAND_TOKEN: token, BAND_EMAIL: email, BAND_PASSWORD: password } = process.env;
if (!file || !values.project || !baseUrl || !(token || (email && password))) {
  console.error('usage: BAND_API_URL=… BAND_TOKEN=bcp_… (or BAND_EMAIL=… BAND_PASSWORD=…) node publish-mix.mjs <file> --project <name> [--vibe <name>] [--cut <name>] [--name <display name>] [--expires-in <seconds>]');
  process.exit(2);
}

const band = new BandClient({ baseUrl, userAgent: 'bandcollab-publish-mix', timeoutMs: 120_000, ...(token ? { token } : {}) });
const cutName = values.cut ?? path.basename(file, path.extname(file));

try {
  if (!token) await band.auth.login({ email, password });

  const project = (await band.projects.list()).find((p) => p.name === values.project) ?? (await band.projects.create({ name: values.project }));
  const detail = await band.projects.get(project.id);
  const vibe = detail.vibes.find((v) => v.name === values.vibe) ?? (await band.vibes.create(project.id, { name: values.vibe }));
  const cut = ('cuts' in vibe ? vibe.cuts : []).find((c) => c.name === cutName) ?? (await band.cuts.create(vibe.id, { name: cutName }));

  let lastReport = 0;
  const uploaded = await band.files.upload({
    cutId: cut.id,
    file,
    name: values.name,
    onProgress: ({ loaded, total }) => {
      // CI logs are not terminals: a plain line every few seconds.
      if (Date.now() - lastReport < 3000 && loaded !== total) return;
      lastReport = Date.now();
      console.log(`uploading ${path.basename(file)}: ${Math.floor((loaded / total) * 100)}% (${loaded} of ${total} bytes)`);
    },
  });
  const expiresIn = values['expires-in'] ? Number(values['expires-in']) : undefined;
  const link = await band.files.share(uploaded.id, { expiresIn });
  console.log(`published ${uploaded.name} (${uploaded.type}, sha256 ${uploaded.sha256}) to ${project.name} / ${vibe.name} / ${cut.name}`);
  console.log(link.shareUrl);
  if (process.env.GITHUB_OUTPUT) await appendFile(process.env.GITHUB_OUTPUT, `share_url=${link.shareUrl}\n`);
  // A token is no session: there is nothing to log out of (and the server refuses a token on /api/auth/*).
  if (!token) await band.auth.logout();
} catch (error) {
  if (error instanceof BandApiError) console.error(`publish failed: ${error.detail} [${error.code}, request ${error.requestId ?? 'none'}]`);
  else if (error instanceof BandNetworkError) console.error(`publish failed: ${error.message}`);
  else console.error(`publish failed: ${error.message}`);
  process.exitCode = 1;
}
