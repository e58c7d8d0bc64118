// The one login per profile of band before per-server logins, adopted as the login on the server that
// issued it.
import { type CredentialStore, FileStore, type StoreKind } from './credentials.js';
import { originOf, type ProfileSettings, type ProfileUser } from './settings.js';

/** How band before per-server logins kept the one login of a profile, beside `apiUrl`. */
interface LegacySettings extends ProfileSettings {
  credentialStore?: StoreKind;
  user?: ProfileUser;
}

/** One profile's settings, read and saved. */
export interface ProfileSettingsAccess {
  readonly settings: ProfileSettings;
  saveSettings(settings: ProfileSettings): Promise<void>;
}

/**
 * A login stored by an earlier band (one per profile: `legacyFile`, `credentials/<profile>.json`, or the
 * keychain account `<profile>@<apiUrl>`) was issued by the server saved with it: it becomes that server's login.
 */
export async function adoptLegacyLogin(
  profile: ProfileSettingsAccess,
  legacyFile: string,
  openStore: (kind: StoreKind, origin: string) => Promise<CredentialStore>,
): Promise<void> {
  const { credentialStore: kind, user, ...settings } = profile.settings as LegacySettings;
  if (!kind) return;
  let logins = settings.logins;
  if (user && settings.apiUrl) {
    const legacy =
      kind === 'file'
        ? new FileStore(legacyFile)
        : await openStore(kind, settings.apiUrl); // the account named the API URL, not its origin
    const tokens = await legacy.read();
    // Removed before writing: for a keychain, the old account is often the new one.
    await legacy.remove();
    if (tokens) {
      const origin = originOf(settings.apiUrl);
      await (await openStore(kind, origin)).write(tokens);
      logins = { ...logins, [origin]: { credentialStore: kind, user } };
    }
  }
  await profile.saveSettings({ ...settings, logins });
}
