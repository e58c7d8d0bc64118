// The activity digest (§19): at DIGEST_HOUR UTC (weekly ones on Mondays), each member whose digest is due gets
// what others did in their projects since their last digest that no mail told them at once, only when there is
// something. The `digest` job runs every DIGEST_CHECK_SECONDS (one instance claims each run); within the hour,
// each member's digest of the period is claimed in the transaction that queues its mail, so it goes once
// across instances and runs. An empty one is not claimed: activity later within the hour still goes.
import { inject, injectable } from 'tsyringe';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Sql } from '../core/database.js';
import { CLOCK, CONFIG, SQL } from '../core/di.js';
import { Mailer } from '../email/mailer.js';
import { DIGEST_LABELS, Notifier } from './notifier.js';
import { NotificationsRepository, type ProjectActivity } from './repository.js';

const DAY_MS = 86_400_000;
/** Monday in Date.getUTCDay(). */
const MONDAY = 1;

@injectable()
export class Digests {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(CONFIG) private readonly config: Config,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(NotificationsRepository) private readonly repository: NotificationsRepository,
    @inject(Mailer) private readonly mailer: Mailer,
    @inject(Notifier) private readonly notifier: Notifier,
  ) {}

  /** The `digest` job: sends the digests due now (none outside DIGEST_HOUR), and drops old activity. */
  run = async (): Promise<void> => {
    await this.repository.purgeActivity();
    if (!this.mailer.enabled) return;
    // The server's clock, as every other rule of time here: a test moves it instead of waiting for the hour.
    const now = new Date(this.clock.now());
    if (now.getUTCHours() !== this.config.digestHour) return;
    const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), this.config.digestHour));
    await this.sendDue('daily', periodStart, now, DAY_MS);
    if (now.getUTCDay() === MONDAY) await this.sendDue('weekly', periodStart, now, 7 * DAY_MS);
  };

  private async sendDue(frequency: 'daily' | 'weekly', periodStart: Date, now: Date, periodMs: number): Promise<void> {
    for (const member of await this.repository.digestCandidates(frequency, periodStart)) {
      await this.sql.begin(async (tx) => {
        const since = await this.repository.lastCovered(tx, member.id, new Date(periodStart.getTime() - periodMs));
        const activity = await this.repository.activityFor(tx, member.id, since, now);
        if (activity.length === 0) return;
        if (!(await this.repository.claimDigest(tx, member.id, periodStart, now))) return;
        await this.notifier.send(tx, member, 'digest', {
          subject: `What happened in your bandcollab projects ${frequency === 'daily' ? 'today' : 'this week'}`,
          paragraphs: [`Hello ${member.name},`, `Since ${since.toUTCString()}, in your projects:`, ...lines(activity), 'Open a project with band project show <name>; its comments with band comment list --project <name>.'],
          link: { url: `${this.config.publicUrl}/api/projects`, label: 'Your projects' },
        });
      });
    }
  }
}

/** One paragraph per project: its counts by kind and who. */
function lines(activity: ProjectActivity[]): string[] {
  const byProject = new Map<string, ProjectActivity[]>();
  for (const row of activity) byProject.set(row.projectId, [...(byProject.get(row.projectId) ?? []), row]);
  return [...byProject.values()].map((rows) => {
    const counts = rows.map((row) => {
      const [one, many] = DIGEST_LABELS[row.type as keyof typeof DIGEST_LABELS] ?? [row.type, row.type];
      return `${row.count} ${row.count === 1 ? one : many}`;
    });
    const actors = [...new Set(rows.flatMap((row) => row.actors))].sort();
    return `"${rows[0]!.projectName}": ${counts.join(', ')}${actors.length > 0 ? ` (by ${actors.join(', ')})` : ''}.`;
  });
}
