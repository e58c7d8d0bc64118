// `pnpm test` after the build: the type check and the test run side by side. The run's workers spend much of
// their time waiting on the processes their tests drive (a quarter of two cores idles during a run), time
// enough for tsc, which took some 20 s before the run when the two went one after the other. The type check's
// output is printed when it ends; a failed type check fails `pnpm test` and is named after the run's summary.
import { spawn } from 'node:child_process';

const exitCode = (child) => new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));

const typecheck = spawn('pnpm', ['typecheck'], { stdio: ['ignore', 'pipe', 'pipe'] });
let typecheckOutput = '';
typecheck.stdout.setEncoding('utf8').on('data', (chunk) => (typecheckOutput += chunk));
typecheck.stderr.setEncoding('utf8').on('data', (chunk) => (typecheckOutput += chunk));
const typechecked = exitCode(typecheck).then((code) => {
  if (code !== 0) process.stderr.write(`\npnpm typecheck failed:\n${typecheckOutput}\n`);
  return code;
});

const projects = ['unit', 'integration', 'sdk-fetch'].flatMap((name) => ['--project', name]);
const tests = spawn('vitest', ['run', ...projects], { stdio: 'inherit' });
const [testsCode, typecheckCode] = await Promise.all([exitCode(tests), typechecked]);
if (typecheckCode !== 0) process.stdout.write('Failed: pnpm typecheck (its output is above)\n');
process.exitCode = testsCode || typecheckCode;
