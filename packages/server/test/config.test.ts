import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/core/config.js';

describe('settings', () => {
  it('defaults every setting as the contract says', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      publicUrl: 'http://localhost:3000',
      appUrl: 'http://localhost:3000',
      dataDir: path.resolve('./data'),
      databaseUrl: null,
      jwtSecret: null,
      cookieSecure: false,
      corsOrigins: [],
      trustProxy: false,
      logLevel: 'info',
      oidc: null,
      accessTokenTtlSeconds: 900,
      loginMaxFailures: 10,
      loginWindowSeconds: 900,
      loginMaxFailuresPerAddress: 100,
      registerMaxPerAddress: 20,
      registerWindowSeconds: 3600,
      purgeIntervalSeconds: 300,
    });
  });

  it('derives PUBLIC_URL from PORT, and Secure cookies from an https PUBLIC_URL unless COOKIE_SECURE says otherwise', () => {
    expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PUBLIC_URL: 'https://band.example.com/' })).toMatchObject({ publicUrl: 'https://band.example.com', cookieSecure: true });
    expect(loadConfig({ PUBLIC_URL: 'https://band.example.com', COOKIE_SECURE: 'false' }).cookieSecure).toBe(false);
    expect(loadConfig({ COOKIE_SECURE: 'true' }).cookieSecure).toBe(true);
  });

  it('reads the lists and switches', () => {
    const config = loadConfig({ CORS_ORIGINS: 'https://a.example.com, https://b.example.com/', TRUST_PROXY: 'true', LOG_LEVEL: 'WARN', APP_URL: 'https://app.example.com' });
    expect(config).toMatchObject({ corsOrigins: ['https://a.example.com', 'https://b.example.com'], trustProxy: true, logLevel: 'warn', appUrl: 'https://app.example.com' });
  });

  it('turns the identity provider on only with issuer, client id and secret', () => {
    expect(loadConfig({ OIDC_ISSUER: 'https://id.example.com', OIDC_CLIENT_ID: 'band' }).oidc).toBeNull();
    expect(loadConfig({ OIDC_ISSUER: 'https://id.example.com', OIDC_CLIENT_ID: 'band', OIDC_CLIENT_SECRET: 's' }).oidc).toMatchObject({
      issuer: 'https://id.example.com',
      clientId: 'band',
      clientSecret: 's',
    });
  });

  it('reports every bad value at once', () => {
    let thrown: unknown;
    try {
      loadConfig({ PORT: '70000', TRUST_PROXY: 'maybe', CORS_ORIGINS: 'not a url', DATABASE_URL: 'mysql://x' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems).toHaveLength(4);
  });

  it('reads the connection limits: idle timeout, connection limit and the header timeout tunable', () => {
    expect(loadConfig({})).toMatchObject({ idleTimeoutSeconds: 60, maxConnections: 2000, headersTimeoutSeconds: 60 });
    expect(loadConfig({ IDLE_TIMEOUT_SECONDS: '5', MAX_CONNECTIONS: '10', HEADERS_TIMEOUT_SECONDS: '2' })).toMatchObject({
      idleTimeoutSeconds: 5,
      maxConnections: 10,
      headersTimeoutSeconds: 2,
    });
    expect(() => loadConfig({ IDLE_TIMEOUT_SECONDS: '0' })).toThrow(/IDLE_TIMEOUT_SECONDS must be a whole number/);
    expect(() => loadConfig({ MAX_CONNECTIONS: 'many' })).toThrow(/MAX_CONNECTIONS must be a whole number/);
  });

  it('caps connections per client address at the smaller of 200 and a tenth of MAX_CONNECTIONS, unless MAX_CONNECTIONS_PER_ADDRESS says', () => {
    expect(loadConfig({}).maxConnectionsPerAddress).toBe(200);
    expect(loadConfig({ MAX_CONNECTIONS: '20000' }).maxConnectionsPerAddress).toBe(200);
    expect(loadConfig({ MAX_CONNECTIONS: '200' }).maxConnectionsPerAddress).toBe(20);
    expect(loadConfig({ MAX_CONNECTIONS: '5' }).maxConnectionsPerAddress).toBe(1);
    expect(loadConfig({ MAX_CONNECTIONS: '200', MAX_CONNECTIONS_PER_ADDRESS: '50' }).maxConnectionsPerAddress).toBe(50);
    expect(() => loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '0' })).toThrow(/MAX_CONNECTIONS_PER_ADDRESS must be a whole number/);
  });

  it('analyses one file at a time by default; JOBS_CONCURRENCY_ANALYSIS (earlier ANALYSIS_CONCURRENCY) takes 0 (none here) to 4', () => {
    expect(loadConfig({}).jobsConcurrency.analysis).toBe(1);
    expect(loadConfig({ JOBS_CONCURRENCY_ANALYSIS: '0' }).jobsConcurrency.analysis).toBe(0);
    expect(loadConfig({ ANALYSIS_CONCURRENCY: '4' }).jobsConcurrency.analysis).toBe(4);
    expect(loadConfig({ ANALYSIS_CONCURRENCY: '0', JOBS_CONCURRENCY_ANALYSIS: '2' }).jobsConcurrency.analysis).toBe(2);
    expect(() => loadConfig({ JOBS_CONCURRENCY_ANALYSIS: '5' })).toThrow(/JOBS_CONCURRENCY_ANALYSIS must be a whole number from 0 to 4/);
    expect(() => loadConfig({ ANALYSIS_CONCURRENCY: '5' })).toThrow(/ANALYSIS_CONCURRENCY must be a whole number from 0 to 4/);
  });

  it('runs each job kind at its documented concurrency, JOBS_CONCURRENCY_<KIND>', () => {
    expect(loadConfig({}).jobsConcurrency).toEqual({
      analysis: 1, preview: 1, webhook_delivery: 8, email: 4, digest: 1, trash_purge: 1, upload_purge: 1, expired_rows_purge: 1,
    });
    expect(loadConfig({ JOBS_CONCURRENCY_WEBHOOK_DELIVERY: '64' }).jobsConcurrency.webhook_delivery).toBe(64);
    expect(() => loadConfig({ JOBS_CONCURRENCY_PREVIEW: '5' })).toThrow(/JOBS_CONCURRENCY_PREVIEW must be a whole number from 0 to 4/);
  });
});
