// MessageMetadata (one per SEND) and SingleMessageMetadata (one per message inside a batch), as
// PulsarApi.proto numbers their fields.
import { ProtoWriter } from './proto-writer.js';

/** CompressionType enum values. */
export const CompressionCode = { none: 0, lz4: 1, zlib: 2, zstd: 3, snappy: 4 } as const;

export interface BatchMetadata {
  producerName: string;
  sequenceId: number;
  publishTime: number;
  compression: number;
  uncompressedSize: number;
  numMessagesInBatch: number;
  highestSequenceId: number;
}

export function encodeMessageMetadata(m: BatchMetadata): Buffer {
  // producer_name=1, sequence_id=2, publish_time=3, compression=8, uncompressed_size=9,
  // num_messages_in_batch=11, highest_sequence_id=24
  const w = new ProtoWriter(96).string(1, m.producerName).uint(2, m.sequenceId).uint(3, m.publishTime);
  if (m.compression !== 0) w.uint(8, m.compression).uint(9, m.uncompressedSize);
  w.uint(11, m.numMessagesInBatch).uint(24, m.highestSequenceId);
  return w.finish();
}

export interface SingleMessage {
  readonly payload: Buffer;
  readonly key?: string | undefined;
  readonly properties?: Readonly<Record<string, string>> | undefined;
  /** Milliseconds since the epoch; 0 or undefined = not set. */
  readonly eventTime?: number | undefined;
}

function writeSingleMetadata(w: ProtoWriter, msg: SingleMessage, sequenceId: number): void {
  // properties=1 (KeyValue key=1 value=2), partition_key=2, payload_size=3, event_time=5, sequence_id=8
  if (msg.properties) {
    for (const k in msg.properties) w.message(1, (kv) => kv.string(1, k).string(2, msg.properties![k]!));
  }
  if (msg.key !== undefined) w.string(2, msg.key);
  w.uint(3, msg.payload.length);
  if (msg.eventTime) w.uint(5, msg.eventTime);
  w.uint(8, sequenceId);
}

const scratch = new ProtoWriter(256);

/** The uncompressed payload of a batch: each message's `[u32 size][SingleMessageMetadata][payload]`, in one buffer. */
export function encodeBatch(msgs: readonly SingleMessage[], firstSequenceId: number): Buffer {
  let capacity = 0;
  for (const m of msgs) capacity += m.payload.length + 48;
  let out = Buffer.allocUnsafe(capacity);
  let pos = 0;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i]!;
    writeSingleMetadata(scratch.reset(), m, firstSequenceId + i);
    const metaLength = scratch.length;
    const need = pos + 4 + metaLength + m.payload.length;
    if (need > out.length) {
      const bigger = Buffer.allocUnsafe(Math.max(need, out.length * 2));
      out.copy(bigger, 0, 0, pos);
      out = bigger;
    }
    pos = out.writeUInt32BE(metaLength, pos);
    pos += scratch.copyTo(out, pos);
    pos += m.payload.copy(out, pos);
  }
  return out.subarray(0, pos);
}
