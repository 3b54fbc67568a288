// Small statistics for the benchmarks: medians and percentiles of samples measured side by side.
export function percentile(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export const median = (samples) => percentile(samples, 50);
export const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));
