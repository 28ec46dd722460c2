// A minimal protobuf (proto2) encoder for the few Pulsar messages weir sends. Only the wire
// types Pulsar's commands use: varint (0) and length-delimited (2). Numbers above 2^53 never occur
// (ids and sequence ids are counters), so plain JS numbers are used for uint64 fields.

export class ProtoWriter {
  private buf: Buffer;
  private pos = 0;

  constructor(initial = 128) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  private rawVarint(v: number): void {
    if (v < 0 || !Number.isSafeInteger(v)) throw new RangeError(`protobuf varint out of range: ${v}`);
    this.ensure(10);
    while (v > 0x7f) {
      this.buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }

  /** uint32/uint64/int32 (non-negative)/enum field. */
  uint(field: number, v: number): this {
    this.rawVarint(field * 8);
    this.rawVarint(v);
    return this;
  }

  bool(field: number, v: boolean): this {
    return this.uint(field, v ? 1 : 0);
  }

  bytes(field: number, v: Uint8Array): this {
    this.rawVarint(field * 8 + 2);
    this.rawVarint(v.length);
    this.ensure(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
    return this;
  }

  string(field: number, v: string): this {
    const len = Buffer.byteLength(v);
    this.rawVarint(field * 8 + 2);
    this.rawVarint(len);
    this.ensure(len);
    this.pos += this.buf.write(v, this.pos);
    return this;
  }

  /** An embedded message, written by `fill` into a nested writer. */
  message(field: number, fill: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter(64);
    fill(inner);
    return this.bytes(field, inner.finish());
  }

  /** Empties the writer for reuse (the bytes of a previous finish() are overwritten). */
  reset(): this {
    this.pos = 0;
    return this;
  }

  get length(): number {
    return this.pos;
  }

  /** Copies the encoded bytes into `target` at `at`; returns how many (no view is made: this runs per message). */
  copyTo(target: Buffer, at: number): number {
    return this.buf.copy(target, at, 0, this.pos);
  }

  /** The encoded bytes (a view; the writer must not be used afterwards). */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}
