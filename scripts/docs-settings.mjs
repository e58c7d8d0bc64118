// `pnpm docs:settings`: writes the settings tables the built server prints (`settings-reference`, from
// core/config.ts) between the settings markers of README.md.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const BEGIN = '<!-- settings: generated from packages/server/src/core/config.ts by `pnpm docs:settings` -->';
const END = '<!-- end of settings -->';

const tables = execFileSync(process.execPath, [path.join(root, 'packages/server/dist/main.js'), 'settings-reference'], { encoding: 'utf8' });
const readmePath = path.join(root, 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const start = readme.indexOf(BEGIN);
const end = readme.indexOf(END);
if (start === -1 || end < start) throw new Error(`README.md lacks the settings markers ${BEGIN} … ${END}`);
writeFileSync(readmePath, `${readme.slice(0, start + BEGIN.length)}\n${tables}${readme.slice(end)}`);
