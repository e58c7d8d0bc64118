import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, expect, it } from 'vitest';

// The web build's types as a browser project sees them: the BUILT package (dist/, `pnpm test` builds first)
// imported by name through its `exports` conditions, in a project without Node's types (`types: []`, the DOM's
// lib) that checks every declaration file (`skipLibCheck: false`). web-bundle.test.ts checks the JavaScript.

const packageDir = fileURLToPath(new URL('../../', import.meta.url));
const typeRoots = [fileURLToPath(new URL('../../../../node_modules/@types', import.meta.url))];

/** A browser app: signs in, uploads the File of an <input type=file> and a Blob, lists projects, hears events, downloads. */
const APP = `
import { BandClient, type FileInput, type Progress } from '@bandcollab/sdk';

const client = new BandClient({ baseUrl: location.origin, credentials: 'include' });
await client.auth.login({ email: 'ada@example.com', password: 'correct horse battery' });
const input = document.querySelector<HTMLInputElement>('input[type=file]')!;
const file: FileInput = input.files![0]!;
const onProgress = (progress: Progress) => console.log(progress.loaded, progress.total);
await client.files.upload({ cutId: 'cut', file, onProgress });
await client.files.upload({ cutId: 'cut', file: new Blob(['RIFF']), filename: 'take.wav' });
for (const project of await client.projects.list()) console.log(project.id, project.name);
const subscription = client.events.subscribe({ onEvent: (event) => console.log(event.type) });
subscription.close();
const saved = await client.files.download('file', { to: new WritableStream<Uint8Array>() });
console.log(saved.size, await client.files.stream('file'));
`;

/** What only Node can pass, one per line: each must be a type error for a browser app, and none for a Node one. */
const NODE_ONLY = [
  `await client.files.upload({ cutId: 'cut', file: '/home/ada/take.wav' });`,
  `new BandClient({ baseUrl: 'https://band.example.com', dispatcher });`,
  `await client.files.download('file', { to: '/home/ada/take.wav' });`,
  `await client.auth.setAvatar('/home/ada/me.png');`,
  `await client.files.upload({ cutId: 'cut', file: new Blob(), filename: 'take.wav', resumable: true });`,
  `await client.files.upload({ versionOf: 'file', file: new Blob(), filename: 'take.wav', ifChanged: true });`,
];
// `any`: a browser app has no undici to make a Dispatcher with.
const NODE_ONLY_HEAD = [`import { BandClient } from '@bandcollab/sdk';`, `declare const client: BandClient;`, `declare const dispatcher: any;`];

let app: string;
beforeAll(async () => {
  app = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-web-types-'));
  await mkdir(path.join(app, 'node_modules', '@bandcollab'), { recursive: true });
  await symlink(packageDir, path.join(app, 'node_modules', '@bandcollab', 'sdk'));
  await writeFile(path.join(app, 'app.ts'), `${APP}export {};\n`);
  await writeFile(path.join(app, 'node-only.ts'), [...NODE_ONLY_HEAD, ...NODE_ONLY, 'export {};', ''].join('\n'));
});
afterAll(() => rm(app, { recursive: true, force: true }));

const COMMON: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  strict: true,
  noEmit: true,
  skipLibCheck: false,
  typeRoots,
};
/** A browser project, resolving the package as a bundler does for the browser. */
const BROWSER: ts.CompilerOptions = { ...COMMON, customConditions: ['browser'], types: [], lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'] };
/** A Node project, resolving the package to the Node build. */
const NODE: ts.CompilerOptions = { ...COMMON, customConditions: ['node'], types: ['node'], lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'] };

/** The diagnostics of a program over `files` in `app`, by file and line, and the files it read. */
function check(files: string[], options: ts.CompilerOptions) {
  const program = ts.createProgram(files.map((file) => path.join(app, file)), options);
  const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const file = diagnostic.file ? path.relative(app, diagnostic.file.fileName) : '';
    const line = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0;
    return { file, line, message: `${file}:${line} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}` };
  });
  return { diagnostics, declarations: program.getSourceFiles().map((source) => source.fileName) };
}

/** One browser program over both files: checking the SDK's and zod's declarations takes seconds. */
let browser: ReturnType<typeof check>;
beforeAll(() => {
  browser = check(['app.ts', 'node-only.ts'], BROWSER);
});

it('type-checks a browser app against the web build without Node types', () => {
  expect(browser.diagnostics.filter((diagnostic) => diagnostic.file !== 'node-only.ts').map((diagnostic) => diagnostic.message)).toEqual([]);
  expect(browser.declarations.some((file) => file.endsWith('/packages/sdk/dist/web.d.ts'))).toBe(true);
  // Without @types/node a browser project could not resolve these: the web build's types must not need them.
  expect(browser.declarations.filter((file) => /\/(@types\/node|undici|undici-types)\//.test(file))).toEqual([]);
});

it('refuses what only Node can pass (file paths, a dispatcher, resumable uploads, hashing) in a browser app', () => {
  const lines = NODE_ONLY.map((_, index) => NODE_ONLY_HEAD.length + index + 1);
  const refused = browser.diagnostics.filter((diagnostic) => diagnostic.file === 'node-only.ts');
  expect([...new Set(refused.map((diagnostic) => diagnostic.line))], refused.map((diagnostic) => diagnostic.message).join('\n')).toEqual(lines);
  // The same lines are right for Node: each error above is the platform's, not a mistake in the line. (Node's
  // own declarations are not checked here: this is about the lines.)
  expect(check(['node-only.ts'], { ...NODE, skipLibCheck: true }).diagnostics.map((diagnostic) => diagnostic.message)).toEqual([]);
});
