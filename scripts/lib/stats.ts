/** Percentile of a sample (nearest-rank), in the sample's unit. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function summarize(latenciesMs: number[]): { count: number; p50_ms: number; p99_ms: number; max_ms: number } {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 100) / 100;
  return { count: sorted.length, p50_ms: round(percentile(sorted, 50)), p99_ms: round(percentile(sorted, 99)), max_ms: round(sorted[sorted.length - 1] ?? NaN) };
}
