// Pulsar errors → what the core does with them, in one place.
import { WeirError } from '../../errors.js';
import { PulsarError, type PulsarErrorCode } from './errors.js';
import { NODE_TRANSIENT } from '../node-errors.js';
import type { ErrorClass } from '../types.js';

/** Broker errors an operator must fix (ServerError names). */
const FATAL_SERVER_ERRORS = new Set([
  'AuthenticationError',
  'AuthorizationError',
  'InvalidTopicName',
  'TopicTerminatedError',
  'NotAllowedError',
  'IncompatibleSchema',
  'UnsupportedVersionError',
]);

/**
 * The error for a broker's ERROR answer to a request: `sink.pulsar.refused` (fatal) when retrying
 * cannot help, else `code` (whose class in the catalogue is retry).
 */
export function serverError(code: PulsarErrorCode, message: string, server: string): PulsarError {
  return new PulsarError(FATAL_SERVER_ERRORS.has(server) ? 'sink.pulsar.refused' : code, message, { cause: { serverError: server } });
}

export function classifyPulsarError(err: unknown): ErrorClass {
  // weir's own errors carry their class in the catalogue (src/error-codes.ts, ./errors.ts).
  if (err instanceof WeirError) return err.errorClass;
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

/** A send, probe or write before the transport has its producers (retried: connect() is on its way). */
export function notConnected(): PulsarError {
  return new PulsarError('sink.pulsar.not_connected', 'the Pulsar sink is not connected yet');
}
