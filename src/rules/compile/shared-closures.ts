// Compiled pieces that depend on nothing but their text (`payload.temp`, `AS temp`, `${temp}`) are
// made once per process and shared by every rule and action that compiles the same text. Each
// rule's own copies were objects of its own that each of its messages walked: with 100 rules, a
// message in turn for each, they left the processor's cache between two messages of one rule,
// and 100 rules cost 4.1–4.5 µs a message against one rule's 3.5 (docs/benchmarks.md, 100 rules
// each matching one). Only closures whose behaviour the key fully determines come here: no
// slots, no constants folded from elsewhere, nothing a rule can write to.

const made = new Map<string, unknown>();
const keys = new WeakMap<object, string>();

/** The closure made for `key`, made by `make` the first time. */
export function shared<T extends object>(key: string, make: () => T): T {
  let f = made.get(key) as T | undefined;
  if (f === undefined) {
    f = make();
    made.set(key, f);
    keys.set(f, key);
  }
  return f;
}

/** The key a closure was shared under, if it was: pieces built only of shared pieces can be shared too. */
export function sharedKey(f: object): string | undefined {
  return keys.get(f);
}
