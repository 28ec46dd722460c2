// Topic → the rules whose FROM filters match it, through a trie of filter levels (`+` and `#`
// are children like any other level). Results are cached per topic: device fleets publish on a
// bounded set of topics, so most lookups are one Map get.

interface Node<T> {
  children: Map<string, Node<T>>;
  values: T[];
}

const CACHE_LIMIT = 100_000;

export class TopicRouter<T> {
  private readonly root: Node<T> = newNode();
  private cache = new Map<string, readonly T[]>();

  /** Adds `value` under `filter` (`$share/<group>/` prefixes are ignored). */
  add(filter: string, value: T): void {
    let node = this.root;
    for (const level of stripShare(filter).split('/')) {
      let next = node.children.get(level);
      if (!next) node.children.set(level, (next = newNode()));
      node = next;
    }
    if (!node.values.includes(value)) node.values.push(value);
    this.cache.clear();
  }

  /** Every value whose filter matches `topic`, each once, in insertion order per filter. */
  match(topic: string): readonly T[] {
    const hit = this.cache.get(topic);
    if (hit) return hit;
    const out: T[] = [];
    const levels = topic.split('/');
    // MQTT §4.7.2: topics starting with '$' are not matched by a leading wildcard.
    walk(this.root, levels, 0, out, topic.startsWith('$'));
    const result = out.length > 1 ? [...new Set(out)] : out;
    if (this.cache.size >= CACHE_LIMIT) this.cache = new Map();
    this.cache.set(topic, result);
    return result;
  }
}

function walk<T>(node: Node<T>, levels: string[], i: number, out: T[], dollar: boolean): void {
  const wildOk = !(dollar && i === 0);
  const hash = wildOk ? node.children.get('#') : undefined;
  // '#' also matches the parent level itself ("a/#" matches "a").
  if (hash) out.push(...hash.values);
  if (i === levels.length) {
    out.push(...node.values);
    return;
  }
  const exact = node.children.get(levels[i]!);
  if (exact) walk(exact, levels, i + 1, out, dollar);
  const plus = wildOk ? node.children.get('+') : undefined;
  if (plus) walk(plus, levels, i + 1, out, dollar);
}

function newNode<T>(): Node<T> {
  return { children: new Map(), values: [] };
}

export function stripShare(filter: string): string {
  if (filter.startsWith('$share/')) return filter.slice(filter.indexOf('/', 7) + 1);
  if (filter.startsWith('$queue/')) return filter.slice(7);
  return filter;
}
