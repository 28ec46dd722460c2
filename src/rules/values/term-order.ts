// Erlang's term order and `==` over rule values: how `<` and `>` order maps, lists and values of
// different kinds, and the equality of `=`, IN, CASE, contains() and the function-call cache.
import { numberValue, WholeFloat } from './floats.js';
import { isBinary, type Obj } from './value-types.js';

const ATOM_RANK = 1;
function rank(v: unknown): number {
  if (typeof v === 'number' || v instanceof WholeFloat) return 0;
  if (typeof v === 'boolean' || v === null || v === undefined) return ATOM_RANK;
  if (isBinary(v)) return 9;
  if (Array.isArray(v)) return v.length === 0 ? 7 : 8;
  return 6; // map
}

/** How an atom (true, false, null, undefined) prints, and compares with a string in compareOp. */
export function atomText(v: unknown): string {
  return v === undefined ? 'undefined' : v === null ? 'null' : String(v);
}

function compareBinaries(a: string | Uint8Array, b: string | Uint8Array): number {
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  const ba = typeof a === 'string' ? Buffer.from(a) : Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const bb = typeof b === 'string' ? Buffer.from(b) : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return Buffer.compare(ba, bb);
}

/** Erlang's term order: number < atom < map < [] < list < binary. */
export function compareTerms(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0: {
      // Numbers by value: 2 and 2.0 are equal (Erlang's ==).
      const x = numberValue(a) as number;
      const y = numberValue(b) as number;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case ATOM_RANK: {
      const x = atomText(a);
      const y = atomText(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 9:
      return compareBinaries(a as string, b as string);
    case 8: {
      const x = a as unknown[];
      const y = b as unknown[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareTerms(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length - y.length < 0 ? -1 : x.length > y.length ? 1 : 0;
    }
    case 6: {
      const x = a as Obj;
      const y = b as Obj;
      const kx = Object.keys(x).sort();
      const ky = Object.keys(y).sort();
      if (kx.length !== ky.length) return kx.length < ky.length ? -1 : 1;
      for (let i = 0; i < kx.length; i++) {
        const c = compareTerms(kx[i], ky[i]);
        if (c !== 0) return c;
      }
      for (const k of kx) {
        const c = compareTerms(x[k], y[k]);
        if (c !== 0) return c;
      }
      return 0;
    }
    default:
      return 0;
  }
}

/** Erlang `==`: structural equality, numbers by value. */
export function termEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'string' && typeof b === 'string') return false;
  if (a instanceof WholeFloat || b instanceof WholeFloat) {
    const x = numberValue(a);
    return x !== undefined && x === numberValue(b);
  }
  // Bytes equal a string with the same UTF-8 bytes; maps and lists compare structurally.
  const objA = typeof a === 'object' && a !== null;
  const objB = typeof b === 'object' && b !== null;
  if (!objA && !objB) return false;
  if (!objA && typeof a !== 'string') return false;
  if (!objB && typeof b !== 'string') return false;
  return compareTerms(a, b) === 0;
}
