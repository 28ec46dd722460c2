// Pulsar errors → what the core does with them, in one place.
import { WeirError } from '../../errors.js';
import type { ErrorClass } from '../types.js';

const NODE_TRANSIENT = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** weir codes for one message that can never be written: dead-letter it, keep the rest. */
const REJECT_CODES = new Set(['sink.pulsar.message_too_large', 'sink.pulsar.bad_event_time']);

/** Broker errors an operator must fix (ServerError names). */
const FATAL_SERVER_ERRORS = new Set(['AuthenticationError', 'AuthorizationError', 'InvalidTopicName', 'TopicTerminatedError', 'NotAllowedError', 'IncompatibleSchema', 'UnsupportedVersionError']);

export function classifyPulsarError(err: unknown): ErrorClass {
  if (err instanceof WeirError) {
    // Too large or unencodable: this item only. Everything that comes from a lost or refused
    // connection, a timeout or a SEND_ERROR was marked retriable where it was raised.
    if (REJECT_CODES.has(err.code)) return 'reject';
    const server = (err.cause as { serverError?: string } | undefined)?.serverError;
    if (server && FATAL_SERVER_ERRORS.has(server)) return 'fatal';
    return err.retriable ? 'retry' : 'fatal';
  }
  // Programming errors are never retried.
  if (err instanceof TypeError || err instanceof RangeError) return 'fatal';
  const e = err as { code?: string; message?: string };
  if (typeof e?.code === 'string' && NODE_TRANSIENT.has(e.code)) return 'retry';
  // The native client rejects with "Failed to send message: <Result>" (C++ Result names).
  const msg = e?.message ?? String(err);
  if (/MessageTooBig/i.test(msg)) return 'reject';
  if (/AuthenticationError|AuthorizationError|TopicTerminated|InvalidTopicName|NotAllowed/i.test(msg)) return 'fatal';
  return 'retry';
}
