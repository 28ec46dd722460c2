// EMQX's str(): the text of any value, as templates, `+` on strings and the string functions see it.
import { floatText, WholeFloat } from './floats.js';
import { formatNumber } from './number-text.js';
import { toJson } from './to-json.js';
import { text } from './value-types.js';

/** EMQX's str(): any value as text (maps and lists JSON-encoded, absent as "undefined"). */
export function toStr(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
      return formatNumber(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
      return 'undefined';
    default:
      if (v === null) return 'null';
      if (v instanceof Uint8Array) return text(v);
      if (v instanceof WholeFloat) return floatText(v.value);
      return toJson(v);
  }
}
