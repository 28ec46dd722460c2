// Pulsar's framing (all integers big-endian):
//   simple:  [totalSize u32][commandSize u32][BaseCommand]
//   payload: [totalSize u32][commandSize u32][BaseCommand][magic u16 0x0e01][crc32c u32]
//            [metadataSize u32][MessageMetadata][payload]
// totalSize counts every byte after itself; the CRC-32C covers everything after the checksum.
import { crc32c } from '@node-rs/crc32';

const MAGIC_CRC32C = 0x0e01;

export function simpleFrame(command: Buffer): Buffer {
  const out = Buffer.allocUnsafe(8 + command.length);
  out.writeUInt32BE(4 + command.length, 0);
  out.writeUInt32BE(command.length, 4);
  command.copy(out, 8);
  return out;
}

export function payloadFrame(command: Buffer, metadata: Buffer, payload: Buffer): Buffer {
  const checked = 4 + metadata.length + payload.length;
  const total = 4 + command.length + 2 + 4 + checked;
  const out = Buffer.allocUnsafe(4 + total);
  let p = 0;
  p = out.writeUInt32BE(total, p);
  p = out.writeUInt32BE(command.length, p);
  p += command.copy(out, p);
  p = out.writeUInt16BE(MAGIC_CRC32C, p);
  const crcAt = p;
  p += 4;
  const start = p;
  p = out.writeUInt32BE(metadata.length, p);
  p += metadata.copy(out, p);
  payload.copy(out, p);
  out.writeUInt32BE(crc32c(out.subarray(start)), crcAt);
  return out;
}

/** One frame read from the wire: its command (the producer reads nothing after it: MESSAGE frames are a consumer's). */
export interface Frame {
  readonly command: Buffer;
}

/** Splits a byte stream into frames; rejects frames larger than `maxFrame`. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxFrame = 64 * 1024 * 1024) {}

  push(chunk: Buffer): Frame[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Frame[] = [];
    for (;;) {
      if (this.buffered < 4) break;
      const head = this.peek(4);
      const total = head.readUInt32BE(0);
      if (total > this.maxFrame) throw new RangeError(`Pulsar frame of ${total} bytes exceeds ${this.maxFrame}`);
      if (this.buffered < 4 + total) break;
      const frame = this.take(4 + total);
      const cmdSize = frame.readUInt32BE(4);
      frames.push({ command: frame.subarray(8, 8 + cmdSize) });
    }
    return frames;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length >= n) return this.chunks[0]!;
    const all = Buffer.concat(this.chunks);
    this.chunks = [all];
    return all;
  }

  private take(n: number): Buffer {
    if (this.chunks[0]!.length < n) this.chunks = [Buffer.concat(this.chunks)];
    const first = this.chunks[0]!;
    const out = first.subarray(0, n);
    if (first.length === n) this.chunks.shift();
    else this.chunks[0] = first.subarray(n);
    this.buffered -= n;
    return out;
  }
}
