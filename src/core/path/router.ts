// Topic → the rules whose FROM filters match it, through a trie of filter levels. Nothing is kept
// per topic: a fleet of 100,000 devices publishes on 100,000 topics, and the per-topic cache this
// replaced held them all (a Map of strings and one-element arrays): 0.54× the 1,000-topic rate and
// 325 MB peak RSS at 100,000 topics, against 0.96–0.97× and 164–169 MB now (docs/benchmarks.md,
// cost as work grows). The walk costs the same for any number of topics: a level with one exact
// child is compared in place, one with more is one Map get, one only `+` reads costs no lookup,
// and no array is built when one filter node matches (the shipped rule): its values are returned.

import { stripShare } from '../../rules/topic.js';

interface Node<T> {
  /** Exact levels below this one. */
  readonly children: Map<string, Node<T>>;
  /** The one key of `children` and its node, when it has one. */
  lone: string | undefined;
  loneNode: Node<T> | undefined;
  /** The `+` child, the `#` child: kept apart from `children` so that a level read by wildcards only costs no lookup. */
  plus: Node<T> | undefined;
  hash: Node<T> | undefined;
  /**
   * The values of the filters ending here. Replaced, never mutated, by `add`: `match` hands this
   * array out, and one a caller holds must not change under it.
   */
  values: readonly T[];
}

export class TopicRouter<T> {
  private readonly root: Node<T> = newNode();
  private readonly found = new Found<T>();

  /** Adds `value` under `filter` (`$share/<group>/` prefixes are ignored). */
  add(filter: string, value: T): void {
    let node = this.root;
    for (const level of stripShare(filter).split('/')) node = child(node, level);
    if (!node.values.includes(value)) node.values = [...node.values, value];
  }

  /** Every value whose filter matches `topic`, each once, in insertion order per filter. Do not modify the array. */
  match(topic: string): readonly T[] {
    // One Found per router, reset per lookup: match is synchronous, and this is the hot path.
    const found = this.found;
    found.reset();
    // MQTT §4.7.2: topics starting with '$' are not matched by a leading wildcard.
    walk(this.root, topic, 0, found, topic.charCodeAt(0) === DOLLAR);
    return found.result();
  }
}

const DOLLAR = 36;
const NONE: readonly never[] = Object.freeze([]);

/** The values arrays met in a walk: the first as it is, later ones merged into a copy, each value once. */
class Found<T> {
  private first: readonly T[] = NONE;
  private merged: T[] | undefined;

  add(values: readonly T[]): void {
    if (values.length === 0) return;
    if (this.first.length === 0) {
      this.first = values;
      return;
    }
    this.merged ??= [...this.first];
    for (const v of values) if (!this.merged.includes(v)) this.merged.push(v);
  }

  reset(): void {
    this.first = NONE;
    this.merged = undefined;
  }

  result(): readonly T[] {
    return this.merged ?? this.first;
  }
}

/**
 * Walks the level of `topic` starting at `start` (`start === topic.length + 1`: past the last
 * level). `dollar`: the topic starts with '$', so level 0 takes no wildcard.
 */
function walk<T>(node: Node<T>, topic: string, start: number, found: Found<T>, dollar: boolean): void {
  const wildOk = !(dollar && start === 0);
  // '#' also matches the parent level itself ("a/#" matches "a").
  if (wildOk && node.hash) found.add(node.hash.values);
  if (start > topic.length) {
    found.add(node.values);
    return;
  }
  let end = topic.indexOf('/', start);
  if (end === -1) end = topic.length;
  // A level with one exact child (`device/`, `/telemetry` in the shipped rule) is compared in
  // place; with more, the level is cut out and looked up.
  let exact: Node<T> | undefined;
  if (node.lone !== undefined) {
    if (end - start === node.lone.length && topic.startsWith(node.lone, start)) exact = node.loneNode;
  } else if (node.children.size > 0) exact = node.children.get(topic.slice(start, end));
  if (exact) walk(exact, topic, end + 1, found, dollar);
  if (wildOk && node.plus) walk(node.plus, topic, end + 1, found, dollar);
}

function child<T>(node: Node<T>, level: string): Node<T> {
  if (level === '+') return (node.plus ??= newNode());
  if (level === '#') return (node.hash ??= newNode());
  let next = node.children.get(level);
  if (!next) node.children.set(level, (next = newNode()));
  const lone = node.children.size === 1;
  node.lone = lone ? level : undefined;
  node.loneNode = lone ? next : undefined;
  return next;
}

function newNode<T>(): Node<T> {
  return { children: new Map(), lone: undefined, loneNode: undefined, plus: undefined, hash: undefined, values: NONE };
}
