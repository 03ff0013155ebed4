/**
 * "Did you mean" for an unknown config key: the known key closest to the
 * typo, when it is close enough to be the likely intent (`timeout` →
 * `timeouts`, `limts` → `limits`, `maxErrorMessageByte` → `...Bytes`).
 */

/** Edit distance with adjacent transpositions (optimal string alignment), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const rows: number[][] = Array.from({ length: s.length + 1 }, (_, i) => [i, ...Array<number>(t.length).fill(0)]);
  for (let j = 1; j <= t.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[s.length]![t.length]!;
}

/**
 * The candidate nearest to `typo`, or undefined when none is near: at most
 * one edit for short keys, and a third of the key's length for longer ones,
 * so `colour` suggests nothing rather than some unrelated key.
 */
export function nearestKey(typo: string, candidates: Iterable<string>): string | undefined {
  const allowed = Math.max(1, Math.floor(typo.length / 3));
  let best: { key: string; distance: number } | undefined;
  for (const key of candidates) {
    const distance = editDistance(typo, key);
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { key, distance };
  }
  return best?.key;
}
