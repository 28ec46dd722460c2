// The part of the `pulsar-client` npm package (the official Node client over the C++ client)
// that weir uses, typed here so that weir compiles without it, and its lazy loader. The package
// is an optionalDependency: its install downloads a prebuilt addon (or builds against libpulsar),
// which fails on machines without that access, and then npm leaves it out.
import { PulsarError } from '../errors.js';

export interface NativeClientConfig {
  serviceUrl: string;
  operationTimeoutSeconds?: number;
  connectionTimeoutMs?: number;
  authentication?: unknown;
  tlsTrustCertsFilePath?: string;
  tlsAllowInsecureConnection?: boolean;
  tlsValidateHostname?: boolean;
  log?: (level: number, file: string, line: number, message: string) => void;
}

export interface NativeProducerConfig {
  topic: string;
  producerName?: string;
  sendTimeoutMs?: number;
  maxPendingMessages?: number;
  maxPendingMessagesAcrossPartitions?: number;
  blockIfQueueFull?: boolean;
  messageRoutingMode?: 'UseSinglePartition' | 'RoundRobinDistribution' | 'CustomPartition';
  hashingScheme?: 'Murmur3_32Hash' | 'BoostHash' | 'JavaStringHash';
  compressionType?: 'None' | 'Zlib' | 'LZ4' | 'ZSTD' | 'SNAPPY';
  batchingEnabled?: boolean;
  batchingMaxPublishDelayMs?: number;
  batchingMaxMessages?: number;
  batchingMaxAllowedSizeInBytes?: number;
}

export interface NativeMessage {
  data: Buffer;
  properties?: Record<string, string>;
  eventTimestamp?: number;
  partitionKey?: string;
}

export interface NativeProducer {
  send(msg: NativeMessage): Promise<unknown>;
  flush(): Promise<unknown>;
  close(): Promise<unknown>;
}

export interface NativeClient {
  createProducer(cfg: NativeProducerConfig): Promise<NativeProducer>;
  getPartitionsForTopic(topic: string): Promise<string[]>;
  close(): Promise<unknown>;
}

/** The module's surface weir touches: `Client` and `AuthenticationToken`. */
export interface PulsarClientModule {
  Client: new (cfg: NativeClientConfig) => NativeClient;
  AuthenticationToken: new (params: { token: string }) => unknown;
}

export const NATIVE_MISSING_HELP =
  "transport: native needs the optional npm package 'pulsar-client', which is not installed or did not load. " +
  'Its install downloads a prebuilt addon from archive.apache.org, or builds one against the Pulsar C++ client (libpulsar 4.2 for pulsar-client 1.18). ' +
  'Fix: run `npm install pulsar-client` where that download works (or with libpulsar and its headers installed), or set transport: protocol, which needs no native code.';

/** Imports `pulsar-client` on first use; a WeirError naming the fix when it is missing. */
export async function loadPulsarClient(importer: () => Promise<unknown> = () => import('pulsar-client' as string)): Promise<PulsarClientModule> {
  let mod: unknown;
  try {
    mod = await importer();
  } catch (err) {
    throw new PulsarError('sink.pulsar.native_missing', `${NATIVE_MISSING_HELP} (${(err as Error).message})`, { cause: err });
  }
  const m = ((mod as { default?: unknown }).default ?? mod) as Partial<PulsarClientModule>;
  if (typeof m.Client !== 'function') throw new PulsarError('sink.pulsar.native_missing', `${NATIVE_MISSING_HELP} (the module has no Client export)`);
  return m as PulsarClientModule;
}
