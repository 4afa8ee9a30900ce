/** Writes one line to stdout. */
export function println(line = ""): void {
  Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
}

/** Writes a value as one line of JSON to stdout. */
export function printJson(value: unknown): void {
  println(JSON.stringify(value));
}

/** Formats epoch milliseconds as an ISO timestamp for people. */
export function formatTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** Formats a mode's permission bits as octal (e.g. `644`). */
export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(3, "0");
}

/** Pads columns of rows to equal widths. */
export function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  }
  return rows.map((row) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")
  );
}
