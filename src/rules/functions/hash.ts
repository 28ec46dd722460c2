// Hash functions: lower-case hex digests of the UTF-8 bytes of a string (or of a byte string).
import { createHash, getHashes } from 'node:crypto';
import { RuleEvalError } from '../errors.js';
import { needBytes, needStr } from './args.js';
import { def, type FunctionSpec } from './registry.js';

const digest =
  (alg: string, name: string) =>
  (v: unknown): string =>
    createHash(alg).update(needBytes(name, v)).digest('hex');

/** EMQX (crypto) algorithm names → OpenSSL's. */
const ALGORITHMS: Record<string, string> = {
  md4: 'md4',
  md5: 'md5',
  sha: 'sha1',
  sha1: 'sha1',
  sha224: 'sha224',
  sha256: 'sha256',
  sha384: 'sha384',
  sha512: 'sha512',
  sha3_224: 'sha3-224',
  sha3_256: 'sha3-256',
  sha3_384: 'sha3-384',
  sha3_512: 'sha3-512',
  shake128: 'shake128',
  shake256: 'shake256',
  blake2b: 'blake2b512',
  blake2s: 'blake2s256',
};

let available: Set<string> | undefined;

function hash(alg: unknown, data: unknown): string {
  const name = needStr('hash', alg);
  const openssl = Object.hasOwn(ALGORITHMS, name) ? ALGORITHMS[name] : undefined;
  available ??= new Set(getHashes());
  if (!openssl || !available.has(openssl)) throw new RuleEvalError('rule.bad_argument', `hash: unknown hash algorithm ${JSON.stringify(name)}`);
  return createHash(openssl).update(needBytes('hash', data)).digest('hex');
}

export const HASH_FUNCTIONS: FunctionSpec[] = [
  ...def('hash', 'md5(string): string', 'MD5 as hex.', digest('md5', 'md5'), {
    examples: [{ call: "md5('some val')", result: '1b68352b3e9c2de52ffd322e30bffcc4' }],
  }),
  ...def('hash', 'sha(string): string', 'SHA-1 as hex.', digest('sha1', 'sha'), {
    examples: [{ call: "sha('some val')", result: 'f85ba28ff5ea84a0cbfa118319acb0c5e58ee2b9' }],
  }),
  ...def('hash', 'sha256(string): string', 'SHA-256 as hex.', digest('sha256', 'sha256'), {
    examples: [{ call: "sha256('some val')", result: '67f97635d8a0e064f60ba6e8846a0ac0be664f18f0c1dc6445cd3542d2b71993' }],
  }),
  ...def('hash', 'hash(string, string): string', 'Any of md5, sha, sha224…sha512, sha3_224…sha3_512, shake128, shake256, blake2b, blake2s, as hex.', hash, {
    examples: [
      { call: "hash('sha256', 'some val')", result: '67f97635d8a0e064f60ba6e8846a0ac0be664f18f0c1dc6445cd3542d2b71993' },
      { call: "hash('nope', 'x')", error: true },
    ],
  }),
];
