// Whether a configured URL can work, decided when the configuration loads (`weir check` and
// `weir run` alike) instead of by a driver at connect time, where a bad URL either fails without
// naming the file or, worse, quietly falls back to a default host (new URL('htp:/nope') parses,
// with no host, and net.connect then dials localhost).

export interface UrlRule {
  /** The accepted schemes, with their colon ('mqtt:'). */
  readonly schemes: readonly string[];
  /** How the message names them: 'mqtt:// or mqtts://'. */
  readonly expected: string;
  /** A URL to write instead, given in every message. */
  readonly example: string;
  /** Whether a URL without a host is complete anyway (a Unix socket named in the query). */
  readonly hostless?: (url: URL) => boolean;
}

/** What is wrong with `text` as a URL of this kind, saying what to write instead; undefined when it can work. */
export function urlProblem(text: string, rule: UrlRule): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    const noColon = /^[a-z][a-z0-9+.-]*\/\//i.test(text) ? ' (the scheme ends in "://")' : '';
    return `not a URL${noColon}: write scheme://host:port with a numeric port, e.g. ${rule.example}`;
  }
  if (!rule.schemes.includes(url.protocol)) return `scheme must be ${rule.expected}, e.g. ${rule.example}`;
  if (!url.hostname && !rule.hostless?.(url)) return `no host after ${url.protocol}//, e.g. ${rule.example}`;
  return undefined;
}
