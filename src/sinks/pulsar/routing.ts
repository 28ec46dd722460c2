// Which partition a message goes to, as the Java client's RoundRobinPartition router decides it:
// a keyed message goes to signSafeMod(hash(key), partitions), so one key always lands in one
// partition; an unkeyed one goes round-robin. The hash is the Java client's: JavaStringHash
// (String.hashCode() over UTF-16 code units, & Integer.MAX_VALUE — the Java default) or
// Murmur3_32Hash (MurmurHash3 x86 32-bit, seed 0, over the key's UTF-8 bytes, & Integer.MAX_VALUE).
// The C++/Node client's default BoostHash is not reproducible here, so weir always names a scheme.

export type HashingScheme = 'java_string_hash' | 'murmur3_32_hash';

export function javaStringHash(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return h & 0x7fffffff;
}

export function murmur3_32(data: Uint8Array, seed = 0): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed | 0;
  const len = data.length;
  const blocks = len - (len % 4);
  const mixK = (k: number) => Math.imul(rotl(Math.imul(k, c1), 15), c2);
  for (let i = 0; i < blocks; i += 4) {
    const k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    h ^= mixK(k);
    h = (Math.imul(rotl(h, 13), 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  for (let i = 0; i < len % 4; i++) k ^= data[blocks + i]! << (i * 8);
  h ^= mixK(k);
  h ^= len;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

export function murmur3Hash(key: string): number {
  return murmur3_32(Buffer.from(key, 'utf8')) & 0x7fffffff;
}

export function keyHash(scheme: HashingScheme, key: string): number {
  return scheme === 'murmur3_32_hash' ? murmur3Hash(key) : javaStringHash(key);
}

/** Chooses partitions: by key hash when a key is given, else round-robin. */
export class PartitionRouter {
  private next = 0;

  constructor(
    private readonly partitions: number,
    private readonly scheme: HashingScheme,
  ) {}

  choose(key: string | undefined): number {
    if (this.partitions <= 1) return 0;
    if (key !== undefined) return keyHash(this.scheme, key) % this.partitions;
    const p = this.next;
    this.next = (p + 1) % this.partitions;
    return p;
  }
}
