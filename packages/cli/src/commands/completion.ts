// Shell completion scripts, generated from the command tree itself (every group is loaded for this
// command), so they never disagree with the commands. They complete command names and flags.
import type { Command } from 'commander';
import { usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';

interface Node {
  /** "file/upload"; "" for band itself. */
  path: string;
  words: string[];
}

export function register(completion: Command, factory: Factory): void {
  withExamples(
    completion
      .argument('<shell>', 'bash, zsh or fish')
      .action((shell: string) => {
        const nodes = tree(completion.parent!);
        const scripts: Record<string, (nodes: Node[]) => string> = { bash, zsh, fish };
        const script = scripts[shell];
        if (!script) throw usageError(`no completion for "${shell}": use bash, zsh or fish`);
        factory.io.stdout.write(script(nodes));
      }),
    'band completion bash > /etc/bash_completion.d/band',
    'band completion zsh > "${fpath[1]}/_band"',
    'band completion fish > ~/.config/fish/completions/band.fish',
  );
}

function tree(program: Command): Node[] {
  const globalFlags = flags(program);
  const nodes: Node[] = [];
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

function known(nodes: Node[]): string {
  return `|${nodes.map((node) => node.path).join('|')}|`;
}

function bash(nodes: Node[]): string {
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

function zsh(nodes: Node[]): string {
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

function fish(nodes: Node[]): string {
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
