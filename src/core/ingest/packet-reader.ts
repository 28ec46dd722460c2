// Splits one connection's byte stream into MQTT packets. PUBLISH without properties — nearly
// every telemetry message — is decoded here, with its payload a view of the received bytes; every
// other packet (CONNACK, SUBACK, a PUBLISH with MQTT 5 properties…) goes to mqtt-packet's parser
// whole. Why: mqtt-packet copies each packet through a BufferList and calls its debug logger a
// dozen times per packet; that was the largest single cost of weir's ingest (profile in
// docs/benchmarks.md), and a PUBLISH's layout is small and fixed (MQTT 3.1.1 §3.3, MQTT 5 §3.3).
import mqttPacket, { type IPublishPacket, type Packet } from 'mqtt-packet';
import type { InboundMessage } from './message.js';

/**
 * A PUBLISH this reader decoded: already the shape of the message the session hands on (its
 * payload a Buffer, no properties), so that the session stamps its receipt time on it instead of
 * copying it into a second object per message (docs/benchmarks.md, memory).
 */
export type FastPublish = IPublishPacket & InboundMessage & { payload: Buffer; receivedAt: number };

/** True for a PUBLISH this reader decoded itself. */
export function isFastPublish(p: IPublishPacket): p is FastPublish {
  return 'receivedAt' in p;
}

const PUBLISH = 3;
/** MQTT caps the remaining length at four varint bytes (268,435,455). */
const MAX_VARINT_BYTES = 4;

export class PacketReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes the packet at the head needs in all, once its header has been read; 0 = unknown. */
  private needed = 0;
  private readonly slow: ReturnType<typeof mqttPacket.parser>;

  constructor(
    private readonly protocolVersion: 4 | 5,
    private readonly onPacket: (p: Packet) => void,
    private readonly onError: (err: Error) => void,
  ) {
    this.slow = mqttPacket.parser({ protocolVersion });
    this.slow.on('packet', (p: Packet) => this.onPacket(p));
    this.slow.on('error', (err: Error) => this.onError(err));
  }

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    // A large packet arrives in many chunks: join them once, when all of it is here.
    if (this.needed > this.buffered) return;
    const data = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    let off = 0;
    this.needed = 0;
    while (data.length - off >= 2) {
      let len = 0;
      let mult = 1;
      let i = off + 1;
      let complete = false;
      for (let k = 0; k < MAX_VARINT_BYTES && i < data.length; k++) {
        const b = data[i++]!;
        len += (b & 0x7f) * mult;
        mult *= 128;
        if ((b & 0x80) === 0) {
          complete = true;
          break;
        }
      }
      if (!complete) {
        if (i - off - 1 >= MAX_VARINT_BYTES) return this.fail('malformed remaining length');
        break;
      }
      const end = i + len;
      if (end > data.length) {
        this.needed = end - off;
        break;
      }
      if (data[off]! >> 4 !== PUBLISH || !this.fastPublish(data, off, i, end)) this.slow.parse(data.subarray(off, end));
      off = end;
    }
    const rest = data.length - off;
    this.chunks = rest ? [data.subarray(off)] : [];
    this.buffered = rest;
  }

  /** Decodes a PUBLISH at data[off..end) (body from `body`); false = leave it to mqtt-packet. */
  private fastPublish(data: Buffer, off: number, body: number, end: number): boolean {
    const flags = data[off]! & 0x0f;
    const qos = (flags >> 1) & 3;
    if (qos === 3 || end - body < 2) return false; // malformed: mqtt-packet reports it
    const topicLen = data.readUInt16BE(body);
    let pos = body + 2 + topicLen;
    let messageId: number | undefined;
    if (qos > 0) {
      if (pos + 2 > end) return false;
      messageId = data.readUInt16BE(pos);
      pos += 2;
    }
    if (this.protocolVersion === 5) {
      // Only an empty property list (one zero byte) takes the fast path.
      if (pos >= end || data[pos] !== 0) return false;
      pos += 1;
    }
    if (pos > end) return false;
    const p: FastPublish = {
      cmd: 'publish',
      topic: data.toString('utf8', body + 2, body + 2 + topicLen),
      payload: data.subarray(pos, end),
      qos: qos as 0 | 1 | 2,
      retain: (flags & 1) === 1,
      dup: (flags & 8) === 8,
      messageId,
      length: end - body,
      properties: undefined,
      receivedAt: 0,
    };
    this.onPacket(p);
    return true;
  }

  private fail(why: string): void {
    this.chunks = [];
    this.buffered = 0;
    this.needed = 0;
    this.onError(new Error(why));
  }
}
