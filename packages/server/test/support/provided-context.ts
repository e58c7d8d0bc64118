// What the global setup hands to every test file through vitest's provide/inject.
declare module 'vitest' {
  export interface ProvidedContext {
    /** A superuser URL of the one embedded PostgreSQL cluster the whole run shares (no database part). */
    postgresUrl: string;
    /** The S3-compatible server (fauxqs) the run shares, on loopback: each test makes its own bucket. */
    s3Endpoint: string;
  }
}

export {};
