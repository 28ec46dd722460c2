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

/** Whether a socket error's code is a TLS failure (bad CA, expired or mismatched certificate, no TLS there): it does not heal by itself. */
export function isTlsFailure(code: unknown): boolean {
  return (
    typeof code === 'string' &&
    /^(CERT_|ERR_TLS_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|ERR_SSL_)/.test(code)
  );
}
