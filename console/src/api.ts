// The page's side of the JSON API (src/core/app/console/api.ts holds the types and the endpoint
// list). Paths are relative to the page, so a console behind a reverse proxy's path prefix still
// reaches its own weir. The browser sends http.basic_auth's credentials it was asked for on `/`.
// A POST carries the JSON content type and `x-weir-console: 1`, which a cross-site form cannot
// send and a cross-site fetch cannot without a preflight that weir does not answer.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function answer<T>(res: Response, path: string): Promise<T> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const said = body && typeof body === 'object' && 'error' in body ? String((body as { error: unknown }).error) : text.slice(0, 200);
    throw new ApiError(res.status, `${path}: HTTP ${res.status}${said ? `: ${said}` : ''}`);
  }
  return body as T;
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(`api/${path}`, { signal, headers: { accept: 'application/json' }, cache: 'no-store' });
  return answer<T>(res, path);
}

export async function postJson<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  const res = await fetch(`api/${path}`, {
    method: 'POST',
    signal,
    headers: { 'content-type': 'application/json', 'x-weir-console': '1', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return answer<T>(res, path);
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
