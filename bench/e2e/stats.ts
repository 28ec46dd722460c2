// Medians, percentiles and ratios as every benchmark result rounds them.

/** The median of the ratios that could be measured, to 0.01. */
export const medianRatio = (rs: Array<number | null>): number => Math.round(median(rs.filter((r): r is number => r !== null)) * 100) / 100;

/** The median (the mean of the middle two for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const ratio = (weir: number, ceil: number): number => Math.round((weir / ceil) * 100) / 100;
