import type { Me, PasswordChangeResult } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AbuseLimits } from '../auth/limits.js';
import { Passwords } from '../auth/passwords.js';
import { AuthRepository, toMe, type UserRow } from '../auth/repository.js';
import type { Principal } from '../core/auth-guard.js';
import type { Sql, Tx } from '../core/database.js';
import { SQL } from '../core/di.js';
import { type DeletedContent, StoredObjects } from '../core/stored-objects.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import { PersonalAccessTokenCache } from '../core/personal-access-token-cache.js';
import { SessionCache } from '../core/session-cache.js';
import type { StoredBytes } from '../core/transfer.js';
import { EventPublisher, projectEvent } from '../events/publisher.js';
import type { StoredImage } from '../images/repository.js';
import { IMAGE_NAME, Images } from '../images/service.js';
import { ProjectsRepository } from '../projects/repository.js';
import { TokensRepository } from '../tokens/repository.js';
import { TrashService } from '../trash/service.js';
import { AccountsRepository } from './repository.js';

const invalidCredentials = () => new DomainError('INVALID_CREDENTIALS', 'The password is wrong');

/** The caller's own account: name, avatar, password, deletion. Every change answers the new `Me` record. */
@injectable()
export class AccountsService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(AccountsRepository) private readonly accounts: AccountsRepository,
    @inject(AuthRepository) private readonly users: AuthRepository,
    @inject(ProjectsRepository) private readonly projects: ProjectsRepository,
    @inject(Passwords) private readonly passwords: Passwords,
    @inject(AbuseLimits) private readonly limits: AbuseLimits,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(SessionCache) private readonly sessions: SessionCache,
    @inject(Images) private readonly images: Images,
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(TokensRepository) private readonly tokens: TokensRepository,
    @inject(PersonalAccessTokenCache) private readonly tokenCache: PersonalAccessTokenCache,
    @inject(TrashService) private readonly trash: TrashService,
  ) {}

  /** A new display name; the account's projects hear of it (member.updated). */
  async rename(principal: Principal, name: string): Promise<Me> {
    return this.sql.begin(async (tx) => {
      await this.lock(tx, principal.userId);
      const user = await this.accounts.setName(tx, principal.userId, name);
      await this.announce(tx, user);
      return toMe(user);
    });
  }

  /** `image` is already stored (removed again if this fails); the avatar it replaces is removed after the commit. */
  async setAvatar(principal: Principal, image: StoredImage | null): Promise<Me> {
    const { me, replaced } = await this.images.keepIfRecorded(image, () =>
      this.sql.begin(async (tx) => {
        const before = await this.lock(tx, principal.userId);
        const user = await this.accounts.setAvatar(tx, principal.userId, image);
        if (before.avatar !== user.avatar) await this.announce(tx, user);
        return { me: toMe(user), replaced: before.avatar };
      }),
    );
    if (replaced !== null) await this.images.remove(replaced);
    return me;
  }

  /** An avatar, to any signed-in user (members see each other's); a name no account has is 404. */
  async avatar(name: string): Promise<StoredBytes> {
    const sha256 = IMAGE_NAME.test(name) ? await this.accounts.findAvatarSha256(name) : null;
    if (sha256 === null) throw notFound('Avatar');
    return this.images.stored({ name, sha256 });
  }

  /**
   * Checks the current password (a wrong one counts as a failed login), except for an account that has none
   * (identity provider) setting its first. Every other session of the account is revoked, its access tokens
   * at once; the caller's session stays. Clears a required change (reset-password). Personal access tokens
   * are not sessions: they end only with `revokeTokens`; the answer lists the ones that still work, so whoever
   * changes a password because it leaked sees what else may be in other hands.
   */
  async changePassword(
    principal: Principal,
    input: { currentPassword?: string | undefined; newPassword: string; revokeTokens: boolean },
    clientIp: string,
  ): Promise<PasswordChangeResult> {
    const user = await this.user(principal.userId);
    if (user.passwordHash !== null) {
      if (input.currentPassword === undefined) throw invalidField('currentPassword', 'is required');
      await this.confirmPassword(user, input.currentPassword, clientIp);
    }
    // Signed in: the caller's checks take the reserved lane, whatever floods the open one.
    const passwordHash = await this.passwords.hash(input.newPassword, { account: principal.userId });
    const revokedTokens = await this.sql.begin(async (tx) => {
      await this.lock(tx, principal.userId);
      await this.users.setPassword(tx, principal.userId, passwordHash, false);
      await this.sessions.revokeAllOfUser(tx, principal.userId, principal.sessionId);
      return input.revokeTokens ? this.tokens.deleteAllOf(tx, principal.userId) : 0;
    });
    if (revokedTokens > 0) this.tokenCache.forgetAllOf(principal.userId);
    return { ok: true, revokedTokens, tokens: await this.tokens.listLive(principal.userId) };
  }

  /**
   * Deletes the caller's account, confirmed by its password (or, without one, its email). Refused with
   * LAST_ADMIN while it is the last ADMIN of a project that has other members. Projects where it is the only
   * member go to the trash like any deleted project (with the trash off, with everything in them, their bytes
   * after the commit); it leaves the others (member.removed),
   * where its files stay as a former member's. Its sessions end (their event sockets close) and everything
   * else that signs in as it goes with the row.
   */
  async deleteAccount(principal: Principal, input: { password?: string | undefined; confirm?: string | undefined }, clientIp: string): Promise<void> {
    const user = await this.user(principal.userId);
    if (user.passwordHash !== null) {
      if (input.password === undefined) throw invalidField('password', 'is required');
      await this.confirmPassword(user, input.password, clientIp);
    } else if (input.confirm?.trim().toLowerCase() !== user.email) {
      throw invalidField('confirm', 'must be the email of the account (it has no password)');
    }
    const removed = await this.sql.begin(async (tx) => {
      const account = await this.lock(tx, principal.userId);
      const content: DeletedContent = { files: [], images: [] };
      for (const { projectId, projectName, role } of await this.accounts.memberships(tx, principal.userId)) {
        if (!(await this.projects.lock(tx, projectId))) continue;
        const members = await this.projects.members(tx, projectId);
        if (members.length === 1 && this.trash.enabled) {
          // Like any delete of a project: to the trash, purged at trashedUntil (its bytes stay until then).
          const trashedUntil = await this.trash.move(tx, principal, { kind: 'project', id: projectId, projectId });
          await this.events.publish(tx, projectEvent(principal, projectId, 'project.trashed', { projectId, trashedUntil: trashedUntil.toISOString() }));
          continue;
        }
        if (members.length === 1) {
          const deleted = await this.projects.deleteWithContent(tx, projectId);
          content.files.push(...(deleted?.files ?? []));
          content.images.push(...(deleted?.images ?? []));
          continue;
        }
        if (role === 'ADMIN' && (await this.projects.countAdmins(tx, projectId)) === 1) {
          throw new DomainError(
            'LAST_ADMIN',
            `You are the last ADMIN of the project "${projectName}", which has other members: make one of them ADMIN, or remove them, first`,
          );
        }
        await this.projects.removeMember(tx, projectId, principal.userId);
        await this.events.publish(tx, projectEvent(principal, projectId, 'member.removed', { userId: principal.userId }));
      }
      await this.sessions.revokeAllOfUser(tx, principal.userId);
      // Deleted here rather than by the users row's cascade, which announces nothing: each token's notice
      // closes the event sockets it opened, on every instance.
      await this.tokens.deleteAllOf(tx, principal.userId);
      await this.accounts.delete(tx, principal.userId);
      if (account.avatar !== null) content.images.push(account.avatar);
      return content;
    });
    await this.objects.removeDeleted(removed);
  }

  /** A wrong password counts towards the login abuse limits of the account's email. */
  private async confirmPassword(user: UserRow, password: string, clientIp: string): Promise<void> {
    const confirmed = await this.limits.login(user.email, clientIp, async () =>
      (await this.passwords.verify(user.passwordHash!, password, { account: user.id })) ? true : null,
    );
    if (!confirmed) throw invalidCredentials();
  }

  private async user(userId: string): Promise<UserRow> {
    const user = await this.users.findUserById(userId);
    if (!user) throw notFound('User');
    return user;
  }

  private async lock(tx: Tx, userId: string): Promise<UserRow> {
    const user = await this.accounts.lock(tx, userId);
    if (!user) throw notFound('User');
    return user;
  }

  /** The account's projects hear of its new name or avatar, as the member record of each. */
  private async announce(tx: Tx, user: UserRow): Promise<void> {
    const actor = { id: user.id, name: user.name };
    for (const { projectId, member } of await this.projects.memberRecordsOf(tx, user.id)) {
      await this.events.publish(tx, { type: 'member.updated', projectId, actor, data: { member } });
    }
  }
}
