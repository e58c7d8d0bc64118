// Shell completion scripts for bash, zsh and fish, made from the command tree (completion-tree.ts) by the build,
// which writes each to dist/answers/completion.<shell> (answers.ts): band.cts prints one without loading a command
// group, and a whole run's `band completion` prints the same file. test/startup.test.ts checks that the written
// scripts are the live tree's.
import { readFileSync } from 'node:fs';
import type { Io } from './io.js';

/** A command of the tree: its path and the words that may follow it. */
export interface CompletionNode {
  /** "file/upload"; "" for band itself. */
  path: string;
  words: string[];
}

/** Beside the built chunks; from source (the tests), in the package's dist, which `pnpm build` makes. */
const ANSWERS = new URL(import.meta.url.endsWith('.ts') ? '../dist/answers/' : './answers/', import.meta.url);

export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

export const isCompletionShell = (shell: string): shell is CompletionShell => (COMPLETION_SHELLS as readonly string[]).includes(shell);

/** Writes the script of `shell` the build wrote. */
export function printCompletion(shell: CompletionShell, io: Pick<Io, 'stdout'>): void {
  io.stdout.write(readFileSync(new URL(`completion.${shell}`, ANSWERS), 'utf8'));
}

/** The script of `shell` for the command tree `nodes`. */
export function completionScript(shell: CompletionShell, nodes: CompletionNode[]): string {
  return { bash, zsh, fish }[shell](nodes);
}

function known(nodes: CompletionNode[]): string {
  return `|${nodes.map((node) => node.path).join('|')}|`;
}

function bash(nodes: CompletionNode[]): string {
  const cases = nodes.map((node) => `    "${node.path}") choices="${node.words.join(' ')}" ;;`).join('\n');
  return `# band completion for bash: source this file, or put it in your bash_completion.d
_band() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath="" candidate w i choices=""
  local known="${known(nodes)}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    candidate="\${cmdpath:+\$cmdpath/}\$w"
    [[ "\$known" == *"|\$candidate|"* ]] && cmdpath="\$candidate"
  done
  case "\$cmdpath" in
${cases}
  esac
  COMPREPLY=( \$(compgen -W "\$choices" -- "\$cur") )
}
complete -o default -F _band band
`;
}

function zsh(nodes: CompletionNode[]): string {
  const cases = nodes.map((node) => `    "${node.path}") choices=(${node.words.join(' ')}) ;;`).join('\n');
  return `#compdef band
# band completion for zsh: put this file as _band in a directory of your $fpath
_band() {
  local cmdpath="" candidate w
  local known="${known(nodes)}"
  local -a choices
  for w in \${words[2,CURRENT-1]}; do
    candidate="\${cmdpath:+\$cmdpath/}\$w"
    [[ "\$known" == *"|\$candidate|"* ]] && cmdpath="\$candidate"
  done
  case "\$cmdpath" in
${cases}
  esac
  compadd -- \$choices
  _files
}
compdef _band band
`;
}

function fish(nodes: CompletionNode[]): string {
  const lines = [
    '# band completion for fish: put this file in ~/.config/fish/completions/band.fish',
    'function __band_path',
    `    set -l known ${nodes.map((node) => node.path).filter(Boolean).join(' ')}`,
    '    set -l p ""',
    '    for w in (commandline -opc)[2..-1]',
    '        set -l c $w',
    '        test -n "$p"; and set c "$p/$w"',
    '        contains -- $c $known; and set p $c',
    '    end',
    '    echo $p',
    'end',
  ];
  for (const node of nodes) {
    const names = node.words.filter((word) => !word.startsWith('-'));
    const longs = node.words.filter((word) => word.startsWith('--')).map((word) => `-l ${word.slice(2)}`);
    const condition = `-n 'test (__band_path) = "${node.path}"'`;
    if (names.length > 0) lines.push(`complete -c band -f ${condition} -a '${names.join(' ')}'`);
    if (longs.length > 0) lines.push(`complete -c band ${condition} ${longs.join(' ')}`);
  }
  return `${lines.join('\n')}\n`;
}
