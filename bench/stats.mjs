// Small numeric helpers shared by the benchmark's sections.

export function median(values) {
  return percentile(values, 0.5)
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  if (sorted.length === 0) return NaN
  const index = (sorted.length - 1) * p
  const low = Math.floor(index)
  const high = Math.ceil(index)
  return sorted[low] + (sorted[high] - sorted[low]) * (index - low)
}

export function mapValues(object, fn) {
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, fn(v, k)]))
}

export function round(value, digits) {
  const f = 10 ** digits
  return Math.round(value * f) / f
}

export function fmt(n) {
  return Math.round(n).toLocaleString('en-US')
}

/** `PASS`/`FAIL` beside a figure and its target; `ok(value)` says whether the target is met. */
export function verdict(ok, value) {
  return Number.isFinite(value) && ok(value) ? 'PASS' : 'FAIL'
}
