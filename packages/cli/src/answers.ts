// Run by the build (tsup's onSuccess): writes to dist/answers/ what band.cts answers without loading commander, a
// command group or the SDK — the version, the root help and the completion scripts — so those answers cost
// little more than Node's own start. test/startup.test.ts checks they are what a whole run answers.
import { mkdirSync, writeFileSync } from 'node:fs';
import packageJson from '../package.json' with { type: 'json' };
import { COMPLETION_SHELLS, completionScript } from './completion-scripts.js';
import { liveTree } from './completion-tree.js';
import { rootHelp } from './program.js';

const directory = new URL('./answers/', import.meta.url);
mkdirSync(directory, { recursive: true });
writeFileSync(new URL('version', directory), `${packageJson.version}\n`);
writeFileSync(new URL('help', directory), rootHelp());
const tree = await liveTree();
for (const shell of COMPLETION_SHELLS) writeFileSync(new URL(`completion.${shell}`, directory), completionScript(shell, tree));
