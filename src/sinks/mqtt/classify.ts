// mqtt.js and socket errors → what the core does with them, in one place. weir's own errors
// (connection.ts turns PUBACK and CONNACK reason codes into them) carry their class in the
// catalogue (./errors.ts).
import { WeirError } from '../../errors.js';
import { NODE_TRANSIENT } from '../node-errors.js';
import type { ErrorClass } from '../types.js';

export function classifyMqttError(err: unknown): ErrorClass {
  // Refused (a failure reason code in a PUBACK): reject; busy, connection lost: retry; a CONNACK
  // refusal (credentials, ACL): fatal.
  if (err instanceof WeirError) return err.errorClass;
  const code = (err as { code?: unknown } | null)?.code;
  // The broker is down, restarting or unreachable, or a CONNACK that says "later".
  if (typeof code === 'string' && NODE_TRANSIENT.has(code)) return 'retry';
  // TLS problems (bad CA, expired or mismatched certificate) do not heal by themselves.
  if (typeof code === 'string' && /^(CERT_|ERR_TLS_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/.test(code))
    return 'fatal';
  // Anything else (a connect timeout, a CONNACK saying "later"): a bounded retry by the core.
  return 'retry';
}
