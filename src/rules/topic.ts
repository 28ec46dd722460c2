// MQTT topic filters: validation, matching (`+` one level, `#` the rest, `$`-topics not matched by
// a leading wildcard), and `$share/<group>/` / `$queue/` prefixes stripped as EMQX does for FROM.

/** The filter without a shared-subscription prefix. */
export function stripShare(filter: string): string {
  if (filter.startsWith('$share/')) {
    const slash = filter.indexOf('/', 7);
    return slash < 0 ? '' : filter.slice(slash + 1);
  }
  if (filter.startsWith('$queue/')) return filter.slice(7);
  return filter;
}

/** Why `filter` is not a valid MQTT topic filter, or null when it is. */
export function validateTopicFilter(filter: string): string | null {
  if (filter.startsWith('$share/')) {
    const slash = filter.indexOf('/', 7);
    if (slash < 0 || slash === 7) return 'a $share filter needs a group name and a filter: $share/<group>/<filter>';
    const group = filter.slice(7, slash);
    if (group.includes('+') || group.includes('#')) return 'the $share group name may not contain + or #';
  }
  const f = stripShare(filter);
  if (f.length === 0) return 'empty topic filter';
  if (f.includes('\u0000')) return 'a topic filter may not contain the NUL character';
  if (Buffer.byteLength(f, 'utf8') > 65535) return 'topic filter longer than 65535 bytes';
  const levels = f.split('/');
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i] as string;
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1)) {
      return "'#' must be a whole level and the last one";
    }
    if (level.includes('+') && level !== '+') return "'+' must be a whole level";
  }
  return null;
}

/** Does `topic` match `filter`? Both as written; the filter may carry a $share prefix. */
export function topicMatches(filter: string, topic: string): boolean {
  return compileTopicFilter(filter)(topic);
}

/**
 * A matcher for one filter, split once, that walks the topic without splitting it (the router and
 * every evaluation call it, so it must not allocate).
 */
export function compileTopicFilter(filter: string): (topic: string) => boolean {
  const f = stripShare(filter);
  const levels = f.split('/');
  const wildFirst = levels[0] === '+' || levels[0] === '#';
  if (f === '#') return (topic) => topic.charCodeAt(0) !== 36;
  if (!f.includes('+') && !f.includes('#')) return (topic) => topic === f;
  const n = levels.length;
  return (topic: string): boolean => {
    if (wildFirst && topic.charCodeAt(0) === 36) return false;
    let pos = 0;
    for (let i = 0; i < n; i++) {
      const level = levels[i] as string;
      if (level === '#') return true;
      if (pos > topic.length) {
        return false;
      }
      let end = topic.indexOf('/', pos);
      if (end < 0) end = topic.length;
      if (level !== '+') {
        if (end - pos !== level.length || !topic.startsWith(level, pos)) return false;
      }
      pos = end + 1;
      // Topic exhausted: only a trailing '#' may still match (`a/#` matches `a`).
      if (end === topic.length && i < n - 1) {
        return i === n - 2 && levels[n - 1] === '#';
      }
    }
    return pos > topic.length;
  };
}
