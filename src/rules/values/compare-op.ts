// The comparison operators of rule SQL (`=`, `!=`, `<>`, `<`, `<=`, `>`, `>=`, `=~`) with EMQX's
// conversions between numbers, strings and atoms; term-order.ts orders what is left.
import { numberValue, WholeFloat } from './floats.js';
import { parseNumber } from './number-text.js';
import { atomText, compareTerms, termEquals } from './term-order.js';
import { compileTopicFilter } from '../topic.js';
import { isBinary, text } from './value-types.js';

const topicMatchers = new Map<string, (t: string) => boolean>();

/** `=~`: does the topic on the left match the filter on the right. */
export function topicMatchOp(topic: unknown, filter: unknown): boolean {
  if (!isBinary(topic) || !isBinary(filter)) return false;
  const f = text(filter);
  let m = topicMatchers.get(f);
  if (!m) {
    // Filters are usually constants; the cache is bounded so data-driven filters cannot grow it.
    if (topicMatchers.size > 1000) topicMatchers.clear();
    m = compileTopicFilter(f);
    topicMatchers.set(f, m);
  }
  return m(text(topic));
}

/**
 * A comparison as EMQX does it: undefined compares false with anything but undefined; a number
 * against a string converts the string (throwing when it is not numeric); true/false/null
 * against a string compare as their names; otherwise Erlang's term order.
 */
export function compareOp(op: string, l: unknown, r: unknown): boolean {
  if (l instanceof WholeFloat) l = l.value;
  if (r instanceof WholeFloat) r = r.value;
  if (l === undefined || r === undefined) {
    if (l !== r) return false;
  } else if (typeof l === 'number' && isBinary(r)) {
    r = numberValue(parseNumber(text(r)));
  } else if (isBinary(l) && typeof r === 'number') {
    l = numberValue(parseNumber(text(l)));
  } else if ((typeof l === 'boolean' || l === null) && isBinary(r)) {
    l = atomText(l);
  } else if (isBinary(l) && (typeof r === 'boolean' || r === null)) {
    r = atomText(r);
  }
  if (typeof l === 'number' && typeof r === 'number') {
    switch (op) {
      case '=':
        return l === r;
      case '!=':
      case '<>':
        return l !== r;
      case '<':
        return l < r;
      case '<=':
        return l <= r;
      case '>':
        return l > r;
      case '>=':
        return l >= r;
      default:
        return false;
    }
  }
  switch (op) {
    case '=':
      return termEquals(l, r);
    case '!=':
    case '<>':
      return !termEquals(l, r);
    case '<':
      return compareTerms(l, r) < 0;
    case '<=':
      return compareTerms(l, r) <= 0;
    case '>':
      return compareTerms(l, r) > 0;
    case '>=':
      return compareTerms(l, r) >= 0;
    case '=~':
      return topicMatchOp(l, r);
    default:
      return false;
  }
}
