// HTTP basic authentication for weir's endpoints (http.basic_auth). The credentials are compared
// in constant time: both sides are hashed to 32 bytes first, since timingSafeEqual needs equal
// lengths and comparing the lengths first would tell an attacker the password's length.
import { createHash, timingSafeEqual } from 'node:crypto';

export interface BasicAuthConfig {
  readonly username: string;
  readonly password: string;
}

/** A check of an Authorization header against `cfg`; no config: everything passes. */
export function basicAuth(cfg: BasicAuthConfig | undefined): (authorization: string | undefined) => boolean {
  if (!cfg) return () => true;
  const expected = digest(`${cfg.username}:${cfg.password}`);
  return (authorization) => {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
    // Hash even without a header ('' never matches: both keys are non-empty), for an even time.
    const given = digest(m ? Buffer.from(m[1]!, 'base64').toString('utf8') : '');
    return timingSafeEqual(given, expected);
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
