// "did you mean": the allowed key nearest to a misspelled one. A dozen lines of Levenshtein
// distance written here rather than a dependency: the keys are short (under 30 characters), there
// are a few dozen per level, and it runs only on a key that is already an error.

/** Edit distance (insertions, deletions, substitutions) between a and b. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The closest of `allowed` to `key`, when at most 2 edits away and fewer edits than the allowed
 * key is long (so 'x' does not suggest 'id'); ties go to the first listed.
 */
export function didYouMean(key: string, allowed: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of allowed) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (d < bestDistance && d < k.length) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}
