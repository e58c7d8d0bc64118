// `band completion <shell>`: band.cts answers a known shell before this group loads; this is its help, and
// the answer to a shell band has no script for.
import type { Command } from 'commander';
import { isCompletionShell, printCompletion } from '../completion-scripts.js';
import { usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';

export function register(completion: Command, factory: Factory): void {
  withExamples(
    completion
      .argument('<shell>', 'bash, zsh or fish')
      .action((shell: string) => {
        if (!isCompletionShell(shell)) throw usageError(`no completion for "${shell}": use bash, zsh or fish`);
        printCompletion(shell, factory.io);
      }),
    'band completion bash > /etc/bash_completion.d/band',
    'band completion zsh > "${fpath[1]}/_band"',
    'band completion fish > ~/.config/fish/completions/band.fish',
  );
}
