import { type Setting, SETTINGS } from '../core/config.js';

// The README's settings tables, generated from SETTINGS (`pnpm docs:settings` writes them between the
// README's settings markers; test/unit/settings-reference.test.ts fails while the README differs).

const row = (name: string, setting: Setting): string => {
  const names = [name, ...(setting.with ?? [])].map((variable) => `\`${variable}\``).join(', ');
  const fallback = setting.default === undefined ? setting.otherwise : `\`${setting.default}\``;
  return `| ${names} | ${fallback} | ${setting.meaning} |`;
};

const table = (settings: Array<[string, Setting]>): string =>
  ['| variable | default | meaning |', '|---|---|---|', ...settings.map(([name, setting]) => row(name, setting))].join('\n');

/** The settings as Markdown: the main table, then the tunables that tests lower. */
export function renderSettings(): string {
  const settings: Array<[string, Setting]> = Object.entries(SETTINGS);
  return [
    table(settings.filter(([, setting]) => !setting.tunable)),
    'Tunables with production defaults (tests lower them):',
    table(settings.filter(([, setting]) => setting.tunable)),
  ].join('\n\n');
}
