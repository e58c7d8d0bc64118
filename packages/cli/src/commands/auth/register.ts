import type { AuthResult, BandApiError } from '@bandcollab/sdk';
import type { Command } from 'commander';
import type { Run } from '../../context.js';
import { toCliError } from '../../errors.js';
import { readStdin } from '../../prompt.js';
import { withExamples } from '../../render.js';
import { askNewPassword, askOrFail, type CredentialOptions } from './prompts.js';
import { signedIn } from './sign-in.js';

export function addRegister(auth: Command, run: Run): void {
  withExamples(
    auth
      .command('register')
      .description('create an account and log in (on a terminal: asks for what is missing, and again for what the server refused)')
      .option('--email <email>', 'your email (asked on a terminal when missing)')
      .option('--name <name>', 'your display name (asked on a terminal when missing)')
      .option('--password-stdin', 'read the password from stdin')
      .option('--invite <link>', 'an invitation link (or its token) to your email: join its project too')
      .action(
        run(async (ctx, options: CredentialOptions & { name?: string; invite?: string }) => {
          const asked = new Set<RegisterField>();
          const ask = async (field: RegisterField): Promise<string> => {
            asked.add(field);
            return field === 'password' ? askNewPassword(ctx) : askOrFail(ctx, field === 'email' ? 'Email: ' : 'Name: ', `--${field}`);
          };
          const fields: Record<RegisterField, string> = {
            email: options.email ?? (await ask('email')),
            name: options.name ?? (await ask('name')),
            password: options.passwordStdin ? await readStdin(ctx.io) : await ask('password'),
          };
          const client = ctx.anonymousClient();
          const sdk = await import('@bandcollab/sdk');
          const inviteToken = options.invite === undefined ? undefined : sdk.invitationToken(options.invite);
          let registered: AuthResult | undefined;
          while (!registered) {
            try {
              registered = await client.auth.register({ ...fields, ...(inviteToken === undefined ? {} : { inviteToken }) });
            } catch (error) {
              // On a terminal, what the server refused in an answer is asked again, and only that.
              const failed = error instanceof sdk.BandApiError ? refusedFields(error) : [];
              if (failed.length === 0 || !failed.every((field) => asked.has(field))) throw error;
              ctx.out.error(toCliError(error).message);
              for (const field of failed) fields[field] = await ask(field);
            }
          }
          await signedIn(ctx, registered, inviteToken === undefined ? 'Registered and logged in' : 'Registered (and accepted the invitation) and logged in');
          if (registered.user.role === 'ADMIN') ctx.out.info('The first account on this server: you are its site admin');
        }),
      ),
    'band auth register',
    'band auth register --invite https://band.example.com/invite/2bX…',
    'printf %s "$PASSWORD" | band auth register --email ana@example.com --name Ana --password-stdin',
  );
}

type RegisterField = 'email' | 'name' | 'password';

/** The fields of a refused registration that an answer of the user could fix. */
function refusedFields(error: BandApiError): RegisterField[] {
  if (error.code === 'EMAIL_TAKEN') return ['email'];
  if (error.code !== 'VALIDATION_FAILED') return [];
  const fields = new Set(error.errors.map((field) => field.field));
  return (['email', 'name', 'password'] as const).filter((field) => fields.has(field));
}
