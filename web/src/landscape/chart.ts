// Scaling for the hand-written bar charts: bar lengths proportional to the largest value, on a
// "nice" axis maximum so the gridlines land on round numbers.

/** The smallest of 1, 2, 2.5, 5 × 10^k that is ≥ max (1 for an empty or all-zero chart). */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1
  const exp = Math.floor(Math.log10(max))
  const base = 10 ** exp
  for (const m of [1, 2, 2.5, 5, 10]) {
    if (m * base >= max) return m * base
  }
  return 10 * base
}

/** Gridline values 0 … axisMax in `steps` equal parts. */
export function ticks(axisMax: number, steps = 4): number[] {
  return Array.from({ length: steps + 1 }, (_, i) => (axisMax * i) / steps)
}

/** The length of a bar for value in a chart `size` long whose axis ends at axisMax; a non-zero value is at least 1 unit long so it stays visible. */
export function barLength(value: number, axisMax: number, size: number): number {
  if (!(value > 0) || !(axisMax > 0)) return 0
  return Math.max(1, (Math.min(value, axisMax) / axisMax) * size)
}

/** A share 0–1 as a percentage with one decimal ("12.5 %"); shares of nothing read 0 %. */
export function shareText(share: number): string {
  if (!(share > 0)) return '0 %'
  return `${(Math.round(share * 1000) / 10).toLocaleString()} %`
}
