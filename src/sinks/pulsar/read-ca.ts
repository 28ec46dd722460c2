// tls_trust_certs_file read for the protocol transport, by the sink and by its dead-letter topic.
import { readFileSync } from 'node:fs';
import { PulsarError } from './errors.js';

/** The CA bundle's bytes; none without a file. A file that cannot be read is a clear error naming it. */
export function readCa(file: string | undefined): Buffer | undefined {
  if (!file) return undefined;
  try {
    return readFileSync(file);
  } catch (err) {
    throw new PulsarError('sink.pulsar.tls_ca_unreadable', `tls_trust_certs_file ${file}: ${(err as Error).message}`, { cause: err });
  }
}
