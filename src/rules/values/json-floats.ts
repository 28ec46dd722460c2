// JSON decoding that keeps the floats a payload was written with: `{"t": 20.0}` holds the float
// 20.0, as EMQX's decoder gives it, where JSON.parse would give the integer 20 (floats.ts).
// JSON.parse stays the decoder: only a text that has a number written as a float with a whole
// value (`20.0`, `1e3`, found by a regular expression that may also fire on such text inside a
// string) is read again by the small reader below, which trusts that JSON.parse accepted it.
import { float } from './floats.js';

/** A fraction of zeros (`20.0`, `5.00`) or an exponent (`1e3`, `2.5E1`) after a digit. */
const MAY_HOLD_WHOLE_FLOAT = /\d(?:\.0+(?![0-9])|\.\d*[eE]|[eE])/;

/** JSON.parse's result for `text`, with whole-valued floats as WholeFloat. */
export function parseJson(text: string): unknown {
  const v: unknown = JSON.parse(text);
  if ((typeof v !== 'object' || v === null) && typeof v !== 'number') return v;
  if (!MAY_HOLD_WHOLE_FLOAT.test(text)) return v;
  try {
    return new Reader(text).value();
  } catch (err) {
    // Nesting deeper than this reader's stack: JSON.parse's value, floats read as numbers.
    if (err instanceof RangeError) return v;
    throw err;
  }
}

class Reader {
  private i = 0;
  constructor(private readonly s: string) {}

  private ws(): void {
    const s = this.s;
    let c = s.charCodeAt(this.i);
    while (c === 32 || c === 9 || c === 10 || c === 13) c = s.charCodeAt(++this.i);
  }

  value(): unknown {
    this.ws();
    const s = this.s;
    const c = s[this.i];
    if (c === '{') {
      this.i++;
      const out: Record<string, unknown> = {};
      this.ws();
      if (s[this.i] === '}') {
        this.i++;
        return out;
      }
      for (;;) {
        this.ws();
        const k = this.string();
        this.ws();
        this.i++; // ':'
        const v = this.value();
        // An own data property even for `__proto__`, as JSON.parse makes it.
        if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
        else out[k] = v;
        this.ws();
        if (s[this.i++] === '}') return out;
      }
    }
    if (c === '[') {
      this.i++;
      const out: unknown[] = [];
      this.ws();
      if (s[this.i] === ']') {
        this.i++;
        return out;
      }
      for (;;) {
        out.push(this.value());
        this.ws();
        if (s[this.i++] === ']') return out;
      }
    }
    if (c === '"') return this.string();
    if (c === 't') {
      this.i += 4;
      return true;
    }
    if (c === 'f') {
      this.i += 5;
      return false;
    }
    if (c === 'n') {
      this.i += 4;
      return null;
    }
    return this.number();
  }

  private string(): string {
    const s = this.s;
    const start = this.i;
    let j = start + 1;
    let escaped = false;
    for (;;) {
      const c = s.charCodeAt(j);
      if (c === 34) break;
      if (c === 92) {
        escaped = true;
        j += 2;
      } else j++;
    }
    this.i = j + 1;
    return escaped ? (JSON.parse(s.slice(start, j + 1)) as string) : s.slice(start + 1, j);
  }

  private number(): number | ReturnType<typeof float> {
    const s = this.s;
    const start = this.i;
    let isFloat = false;
    for (;;) {
      const c = s.charCodeAt(this.i);
      if (c === 46 || c === 101 || c === 69) isFloat = true;
      else if (!((c >= 48 && c <= 57) || c === 45 || c === 43)) break;
      this.i++;
    }
    const n = Number(s.slice(start, this.i));
    return isFloat ? float(n) : n;
  }
}
