// band auth: one file per command (gh's pkg/cmd/auth/<verb>), registered here in the order help lists them.
import type { Command } from 'commander';
import { commandRunner } from '../../context.js';
import type { Factory } from '../../factory.js';
import { withExamples } from '../../render.js';
import { addDeleteAccount } from './delete-account.js';
import { addForgotPassword } from './forgot-password.js';
import { addLink } from './link.js';
import { addLogin } from './login.js';
import { addLogout } from './logout.js';
import { addPassword } from './password.js';
import { addProfile } from './profile.js';
import { addRegister } from './register.js';
import { addStatus } from './status.js';
import { addToken } from './token.js';
import { addUse } from './use.js';

export function register(auth: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(auth, 'band auth login', 'band auth status');
  addRegister(auth, run);
  addLogin(auth, run);
  addLink(auth, run);
  addLogout(auth, run);
  addStatus(auth, run);
  addUse(auth, run);
  addProfile(auth, run);
  addPassword(auth, run);
  addForgotPassword(auth, run);
  addDeleteAccount(auth, run);
  addToken(auth, run);
}
