// A client of a running weir's console API (/api/, docs/console.md): GET and POST as the page
// sends them (a POST with content-type application/json and x-weir-console: 1), with optional
// basic-auth credentials, answering the status and the parsed body. For the API tests and the
// page's browser tests alike.
export interface ApiAnswer<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly text: string;
}

export interface ConsoleClient {
  readonly base: string;
  get<T = unknown>(path: string): Promise<ApiAnswer<T>>;
  /** A POST as the page sends it; `headers` replace or add to the console's own (set one to '' to leave it out). */
  post<T = unknown>(path: string, body: unknown, headers?: Record<string, string>): Promise<ApiAnswer<T>>;
  /** /metrics, as text. */
  metrics(): Promise<string>;
}

export function consoleClient(port: number, auth?: { username: string; password: string }): ConsoleClient {
  const base = `http://127.0.0.1:${port}`;
  const authHeader: Record<string, string> = auth ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` } : {};
  const answer = async <T>(r: Response): Promise<ApiAnswer<T>> => {
    const text = await r.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: r.status, body: body as T, text };
  };
  return {
    base,
    async get(path) {
      return answer(await fetch(`${base}${path}`, { headers: authHeader }));
    },
    async post(path, body, headers = {}) {
      const all: Record<string, string> = { 'content-type': 'application/json', 'x-weir-console': '1', ...authHeader, ...headers };
      for (const [k, v] of Object.entries(all)) if (v === '') delete all[k];
      return answer(await fetch(`${base}${path}`, { method: 'POST', headers: all, body: typeof body === 'string' ? body : JSON.stringify(body) }));
    },
    async metrics() {
      return (await fetch(`${base}/metrics`, { headers: authHeader })).text();
    },
  };
}
