/** The database the global setup migrates once, and test servers' databases are copied from. */
export const MIGRATED_TEMPLATE = 'bandcollab_migrated_template';
