// A minimal protobuf decoder: splits a message into its fields. Varints become numbers (exact up
// to 2^53, which covers every id Pulsar sends back), length-delimited fields stay Buffers that the
// caller decodes further (strings, embedded messages). Fixed 32/64-bit fields are skipped over.

export type FieldValue = number | Buffer;

export class ProtoFields {
  constructor(private readonly fields: Map<number, FieldValue[]>) {}

  has(field: number): boolean {
    return this.fields.has(field);
  }

  uint(field: number, dflt = 0): number {
    const v = this.fields.get(field)?.[0];
    return typeof v === 'number' ? v : dflt;
  }

  bool(field: number, dflt = false): boolean {
    const v = this.fields.get(field)?.[0];
    return typeof v === 'number' ? v !== 0 : dflt;
  }

  string(field: number, dflt = ''): string {
    const v = this.fields.get(field)?.[0];
    return Buffer.isBuffer(v) ? v.toString('utf8') : dflt;
  }

  bytes(field: number): Buffer | undefined {
    const v = this.fields.get(field)?.[0];
    return Buffer.isBuffer(v) ? v : undefined;
  }

  message(field: number): ProtoFields | undefined {
    const v = this.bytes(field);
    return v ? decodeProto(v) : undefined;
  }

  all(field: number): FieldValue[] {
    return this.fields.get(field) ?? [];
  }
}

export function decodeProto(buf: Buffer): ProtoFields {
  const fields = new Map<number, FieldValue[]>();
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let mul = 1;
    for (;;) {
      if (pos >= buf.length) throw new RangeError('truncated protobuf varint');
      const b = buf[pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
  };
  while (pos < buf.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    let value: FieldValue;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const len = varint();
      if (pos + len > buf.length) throw new RangeError('truncated protobuf field');
      value = buf.subarray(pos, pos + len);
      pos += len;
    } else if (wire === 1) {
      pos += 8;
      continue;
    } else if (wire === 5) {
      pos += 4;
      continue;
    } else throw new RangeError(`unsupported protobuf wire type ${wire}`);
    const list = fields.get(field);
    if (list) list.push(value);
    else fields.set(field, [value]);
  }
  return new ProtoFields(fields);
}
