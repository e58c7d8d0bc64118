// The command tree of every group, which completion scripts are made from (completion-scripts.ts) at build time
// (answers.ts).
import type { Command } from 'commander';
import type { CompletionNode } from './completion-scripts.js';
import type { Factory } from './factory.js';
import { buildProgram, GROUPS } from './program.js';

/** Registering declares commands only: no action runs, so nothing asks this factory for anything. */
const UNUSED: Factory = new Proxy({} as Factory, {
  get: () => {
    throw new Error('the completion tree is built without running a command');
  },
});

/** Every command of every group, with its subcommands and flags. */
export async function liveTree(): Promise<CompletionNode[]> {
  const program = buildProgram({ stdout: process.stdout, stderr: process.stderr });
  for (const [name, group] of Object.entries(GROUPS)) (await group.load()).register(program.command(name).description(group.summary), UNUSED);
  return tree(program);
}

function tree(program: Command): CompletionNode[] {
  const globalFlags = flags(program);
  const nodes: CompletionNode[] = [];
  const visit = (command: Command, path: string) => {
    const children = command.commands.filter((child) => child.name() !== 'help');
    const own = command === program ? [] : flags(command);
    nodes.push({ path, words: [...children.map((child) => child.name()), ...own, ...globalFlags, '--help'] });
    for (const child of children) visit(child, path ? `${path}/${child.name()}` : child.name());
  };
  visit(program, '');
  return nodes;
}

function flags(command: Command): string[] {
  return command.options.map((option) => option.long).filter((long): long is string => Boolean(long));
}

