/** Label values of one series, by label name. */
export type Labels<L extends string> = Record<L, string>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Checks a metric name and its label names against the exposition format's rules. */
export function checkNames(
  name: string,
  labelNames: readonly string[],
  reserved: string[] = [],
): void {
  if (!METRIC_NAME.test(name)) throw new TypeError(`Invalid metric name "${name}"`);
  const seen = new Set<string>();
  for (const label of labelNames) {
    if (!LABEL_NAME.test(label) || label.startsWith("__")) {
      throw new TypeError(`Invalid label name "${label}" for metric "${name}"`);
    }
    if (reserved.includes(label)) {
      throw new TypeError(`Label name "${label}" is reserved for metric "${name}"`);
    }
    if (seen.has(label)) throw new TypeError(`Label name "${label}" repeats for metric "${name}"`);
    seen.add(label);
  }
}

/**
 * The values of `labels` in `labelNames` order, checking that exactly those labels are
 * given, as strings.
 */
export function labelValues(
  name: string,
  labelNames: readonly string[],
  labels: Record<string, unknown>,
): string[] {
  const given = Object.keys(labels);
  const names = labelNames.map((label) => `"${label}"`).join(", ") || "no labels";
  if (given.length !== labelNames.length || !labelNames.every((label) => label in labels)) {
    const got = given.map((label) => `"${label}"`).join(", ") || "none";
    throw new TypeError(`Metric "${name}" takes ${names}, got ${got}`);
  }
  return labelNames.map((label) => {
    const value = labels[label];
    if (typeof value !== "string") {
      throw new TypeError(
        `Label "${label}" of metric "${name}" must be a string, got ${typeof value}`,
      );
    }
    return value;
  });
}

/** A map key for one series' label values. */
export function seriesKey(values: readonly string[]): string {
  return JSON.stringify(values);
}

/** `{a="x",b="y"}`, or `""` without labels, with values escaped for the text format. */
export function formatLabels(names: readonly string[], values: readonly string[]): string {
  if (names.length === 0) return "";
  const pairs = names.map((label, index) => `${label}="${escapeLabelValue(values[index]!)}"`);
  return `{${pairs.join(",")}}`;
}

/** Escapes `\`, `"` and newline in a label value. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** Escapes `\` and newline in HELP text. */
export function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** A sample value as the text format writes it: `+Inf`, `-Inf`, `NaN` or a number. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** Splits the `(labels, value)` / `(value)` overload every metric method takes. */
export function splitArgs<L extends string>(
  first: Labels<L> | number | undefined,
  second: number | undefined,
  fallback: number | undefined,
): { labels: Record<string, unknown>; value: number | undefined } {
  if (typeof first === "number") return { labels: {}, value: first };
  return { labels: first ?? {}, value: second ?? fallback };
}
