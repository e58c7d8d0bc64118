import { Command } from 'commander';

const program = new Command('band').description('bandcollab from the command line').version('0.1.0');
await program.parseAsync(process.argv);
