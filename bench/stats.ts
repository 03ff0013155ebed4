/** Small statistics the bench needs; samples are plain arrays of numbers. */

/** The middle value; the mean of the two middle values for an even count. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile (p in 0..100) of unsorted values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** In how many rounds `a`'s p99 was below `b`'s (round i of each ran in the same round of alternation). */
export function lowerInRounds(a: readonly { readonly p99Ms: number }[], b: readonly { readonly p99Ms: number }[]): number {
  let lower = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i]!.p99Ms < b[i]!.p99Ms) lower++;
  return lower;
}

/**
 * The sign test's one-sided p: the chance of `lower` or fewer rounds in `n` where one side's value was the lower, if
 * each round were a coin toss between the two (Binomial(n, 1/2), exact). Small: the first side was the higher more
 * often than a tie makes likely. No rounds: 1. A round where the two are equal (lowerInRounds counts it as not lower)
 * weighs against the first side rather than being dropped, as a textbook sign test would: the cautious way round,
 * and p99s timed in fractions of a microsecond practically never tie.
 */
export function signTestP(lower: number, n: number): number {
  if (n <= 0 || lower >= n) return 1;
  if (lower < 0) return 0;
  // Binomial coefficients as a running product, each term C(n, k) / 2^n; exact enough for any round count run here.
  let term = 2 ** -n;
  let p = term;
  for (let k = 1; k <= lower; k++) {
    term = (term * (n - k + 1)) / k;
    p += term;
  }
  return Math.min(1, p);
}
