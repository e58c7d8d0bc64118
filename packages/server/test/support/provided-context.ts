// What the global setup hands to every test file through vitest's provide/inject.
declare module 'vitest' {
  export interface ProvidedContext {
    /** A superuser URL of the one embedded PostgreSQL cluster the whole run shares (no database part). */
    postgresUrl: string;
  }
}

export {};
