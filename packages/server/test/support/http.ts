export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  json?: unknown;
  body?: RequestInit["body"];
  headers?: Record<string, string>;
}

/** A plain HTTP call against a test server: no SDK, so tests see exactly what goes over the wire. */
export async function call<T = any>(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<TestResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await response.text();
  let parsed: unknown = text;
  if (/json/.test(response.headers.get('content-type') ?? '') && text !== '') parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** A bound `call` for one server, with a helper to register users. */
export function client(baseUrl: string) {
  const request = <T = any>(method: string, path: string, options?: RequestOptions) => call<T>(baseUrl, method, path, options);
  let counter = 0;
  return {
    request,
    /** Registers a fresh user and returns its tokens and record. */
    async register(overrides: { email?: string; password?: string; name?: string } = {}) {
      counter += 1;
      const email = overrides.email ?? `user${counter}-${Math.random().toString(36).slice(2, 8)}@example.com`;
      const password = overrides.password ?? 'correct horse battery';
      const response = await request('POST', '/api/auth/register', {
        json: { email, password, name: overrides.name ?? `User ${counter}` },
      });
      if (response.status !== 201) throw new Error(`register failed: ${response.status} ${response.text}`);
      return {
        ...(response.body as { user: { id: string; email: string; name: string; role: string }; accessToken: string; refreshToken: string; expiresIn: number }),
        password,
      };
    },
  };
}
