// weir's Pulsar settings → the native client's options. The C++ client's defaults differ from the
// Java client's (routing UseSinglePartition, hashing BoostHash, compression None), so every
// setting that changes where or how a message lands is written out explicitly.
import type { PulsarConfig } from '../spec.js';
import type { NativeClientConfig, NativeProducerConfig, PulsarClientModule } from './module.js';

const COMPRESSION = { none: 'None', zlib: 'Zlib', lz4: 'LZ4', zstd: 'ZSTD', snappy: 'SNAPPY' } as const;
const HASHING = { java_string_hash: 'JavaStringHash', murmur3_32_hash: 'Murmur3_32Hash' } as const;

export function nativeClientConfig(cfg: PulsarConfig, mod: Pick<PulsarClientModule, 'AuthenticationToken'>): NativeClientConfig {
  const out: NativeClientConfig = {
    serviceUrl: cfg.service_url,
    operationTimeoutSeconds: Math.max(1, Math.ceil(cfg.connect_timeout_ms / 1000)),
    connectionTimeoutMs: cfg.connect_timeout_ms,
  };
  if (cfg.auth_token) out.authentication = new mod.AuthenticationToken({ token: cfg.auth_token });
  if (cfg.tls_trust_certs_file) out.tlsTrustCertsFilePath = cfg.tls_trust_certs_file;
  if (cfg.service_url.startsWith('pulsar+ssl://')) {
    out.tlsAllowInsecureConnection = cfg.tls_verify === 'none';
    out.tlsValidateHostname = cfg.tls_verify === 'full';
  }
  return out;
}

export function nativeProducerConfig(cfg: PulsarConfig): NativeProducerConfig {
  const b = cfg.batching;
  const out: NativeProducerConfig = {
    topic: cfg.topic,
    sendTimeoutMs: cfg.send_timeout_ms,
    maxPendingMessages: cfg.max_pending,
    maxPendingMessagesAcrossPartitions: cfg.max_pending,
    // Wait for room instead of failing the send: the same backpressure as the protocol transport.
    blockIfQueueFull: true,
    messageRoutingMode: 'RoundRobinDistribution',
    hashingScheme: HASHING[cfg.hashing_scheme],
    compressionType: COMPRESSION[cfg.compression],
    batchingEnabled: b.max_messages > 1,
    batchingMaxMessages: b.max_messages,
    batchingMaxAllowedSizeInBytes: b.max_bytes,
    // The C++ client applies the delay only when > 0.
    batchingMaxPublishDelayMs: Math.max(1, b.max_delay_ms),
  };
  if (cfg.producer_name) out.producerName = cfg.producer_name;
  return out;
}
