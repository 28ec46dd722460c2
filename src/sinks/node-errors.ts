// Node socket errors that mean a service is down, restarting or unreachable for now: every sink
// retries them (classify.ts in each sink's folder).
export const NODE_TRANSIENT: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);
