// kafkajs client options from the sink's config: brokers, TLS, SASL, timeouts, and kafkajs' logs
// routed into weir's logger. Shared by the sink and by the reconcile counter (count.ts).
import { readFileSync } from 'node:fs';
import kafkajs, { type Admin, type KafkaConfig as KafkaJsConfig, type Producer, type SASLOptions } from 'kafkajs';
import type { Logger } from '../../log.js';
import type { KafkaConfig } from './spec.js';

const { logLevel } = kafkajs;

/**
 * kafkajs logs routed into pino. kafkajs logs an ERROR line for every failed request of every
 * internal retry; the failures it gives up on reach the core as thrown errors, which the core logs
 * once per attempt with their class. So kafkajs' ERROR lines go to debug (they are there when
 * someone looks closer), its rare WARN lines stay warnings.
 */
function logCreator(log: Logger): KafkaJsConfig['logCreator'] {
  return () =>
    ({ level, log: entry }) => {
      const { message, timestamp: _t, logger: _l, ...fields } = entry;
      // weir limits the idempotent producer's retries on purpose (see sink.ts): not a warning.
      if (level === logLevel.WARN && !/Limiting retries for the idempotent producer/.test(message)) log.warn(fields, `kafkajs: ${message}`);
      else if (level === logLevel.DEBUG) log.trace(fields, `kafkajs: ${message}`);
      else log.debug(fields, `kafkajs: ${message}`);
    };
}

function sasl(cfg: KafkaConfig): SASLOptions | undefined {
  const s = cfg.sasl;
  if (!s) return undefined;
  switch (s.mechanism) {
    case 'plain':
      return { mechanism: 'plain', username: s.username, password: s.password };
    case 'scram-sha-256':
      return { mechanism: 'scram-sha-256', username: s.username, password: s.password };
    case 'scram-sha-512':
      return { mechanism: 'scram-sha-512', username: s.username, password: s.password };
  }
}

/** Options for `new Kafka(...)`. Reads the TLS files named in the config (no network I/O). */
export function kafkaClientOptions(cfg: KafkaConfig, log: Logger): KafkaJsConfig {
  const opts: KafkaJsConfig = {
    clientId: cfg.client_id,
    brokers: cfg.brokers,
    connectionTimeout: cfg.connection_timeout_ms,
    // The broker waits up to timeout_ms for the acknowledgements; give its answer a moment more.
    requestTimeout: cfg.timeout_ms + 2_000,
    // Short retries inside kafkajs: a broker that stays away must surface as a failed write, which
    // the core retries with backoff, counts, and shows in readiness.
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    logLevel: logLevel.INFO,
    logCreator: logCreator(log),
  };
  if (cfg.ssl) {
    const s = cfg.ssl;
    opts.ssl = {
      rejectUnauthorized: s.reject_unauthorized,
      ...(s.ca_file ? { ca: [readFileSync(s.ca_file, 'utf8')] } : {}),
      ...(s.cert_file ? { cert: readFileSync(s.cert_file, 'utf8') } : {}),
      ...(s.key_file ? { key: readFileSync(s.key_file, 'utf8') } : {}),
      ...(s.servername ? { servername: s.servername } : {}),
    };
  }
  const auth = sasl(cfg);
  if (auth) opts.sasl = auth;
  return opts;
}

/** Connects a producer and an admin client; when either fails, disconnects both and throws. */
export async function connectBoth(producer: Producer, admin: Admin): Promise<void> {
  try {
    await producer.connect();
    await admin.connect();
  } catch (err) {
    await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
    throw err;
  }
}
