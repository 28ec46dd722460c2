// Integers and floats are different values in rule SQL, as in Erlang: `2.0` is a float,
// `is_float(2.0)` is true, `str(2.0)` is "2.0", `4 / 2` is 2.0. A JS number cannot say which it
// is when its value is whole, so such a float is a WholeFloat box; every other number stays a
// plain JS number: whole numbers are integers, the rest floats. The common values (counters,
// readings with a fraction) therefore cost nothing, and only a float that happens to be whole
// (a literal 2.0, `"t": 20.0` in a payload, `/` and math results) is boxed.
//
// Where a box can meet code outside the engine, it answers as a number: toJSON gives the number
// (JSON.stringify prints `2`), valueOf too; rule outputs written as JSON by weir (eval, Kafka,
// Pulsar) print it as `2.0` (to-json.ts), and plainNumbers unboxes a whole value for
// consumers that take numbers only (JSONata, PostgreSQL parameters).
export class WholeFloat {
  constructor(readonly value: number) {}
  toJSON(): number {
    return this.value;
  }
  valueOf(): number {
    return this.value;
  }
  /** As Erlang prints a float: `2.0`, `1.0e21`. */
  toString(): string {
    return floatText(this.value);
  }
}

/** The float `n`: boxed when its value is whole, else the plain number. */
export function float(n: number): number | WholeFloat {
  return Number.isInteger(n) ? new WholeFloat(n) : n;
}

/** Any number's value (a WholeFloat unboxed); undefined for what is not a number. */
export function numberValue(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (v instanceof WholeFloat) return v.value;
  return undefined;
}

export function isNumber(v: unknown): v is number | WholeFloat {
  return typeof v === 'number' || v instanceof WholeFloat;
}

export function isInteger(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

export function isFloat(v: unknown): boolean {
  return v instanceof WholeFloat || (typeof v === 'number' && !Number.isInteger(v));
}

/** The text of a float with a whole value: `2.0` (JS would print `2`). */
export function floatText(n: number): string {
  const s = String(n);
  return /[.eEn]/.test(s) ? s : `${s}.0`;
}

/** `v` with every WholeFloat inside unboxed (copying only the containers that hold one). */
export function plainNumbers(v: unknown): unknown {
  if (v instanceof WholeFloat) return v.value;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x = plainNumbers(v[i]);
      if (x !== v[i]) (out ??= v.slice())[i] = x;
    }
    return out ?? v;
  }
  if (typeof v === 'object' && v !== null && !(v instanceof Uint8Array)) {
    const o = v as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(o)) {
      const x = plainNumbers(o[k]);
      if (x !== o[k]) {
        out ??= { ...o };
        Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
      }
    }
    return out ?? v;
  }
  return v;
}
