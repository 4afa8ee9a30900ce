/**
 * A strict reader of Prometheus' text exposition format 0.0.4, for tests: it rejects
 * anything a Prometheus server would reject, and more (grouping, histogram invariants).
 */

/** One sample line. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One metric family: HELP, TYPE and its samples. */
export interface Family {
  name: string;
  help?: string;
  type: string;
  samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = "[a-zA-Z_][a-zA-Z0-9_]*";
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Parses exposition text, throwing an Error naming the line of the first problem. */
export function parsePrometheusText(text: string): Map<string, Family> {
  if (text !== "" && !text.endsWith("\n")) throw new Error("Text must end with a newline");
  const families = new Map<string, Family>();
  const finished = new Set<string>();
  const seenSeries = new Set<string>();
  const typed = new Set<string>();
  let current: string | undefined;
  const lines = text === "" ? [] : text.slice(0, -1).split("\n");

  const open = (name: string, line: number): Family => {
    if (current !== name) {
      if (current !== undefined) finished.add(current);
      if (finished.has(name)) {
        throw new Error(`Line ${line}: metric "${name}" appears in two groups`);
      }
      current = name;
    }
    let family = families.get(name);
    if (!family) families.set(name, family = { name, type: "untyped", samples: [] });
    return family;
  };

  lines.forEach((line, index) => {
    const number = index + 1;
    if (line === "") throw new Error(`Line ${number}: empty line`);
    if (line.startsWith("#")) {
      const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) (.*)$`).exec(line);
      if (!meta) {
        if (/^# (HELP|TYPE)\b/.test(line)) {
          throw new Error(`Line ${number}: malformed ${line.slice(2, 6)}`);
        }
        return; // a plain comment
      }
      const [, keyword, name, rest] = meta as unknown as [string, string, string, string];
      const family = open(name, number);
      if (keyword === "HELP") {
        if (family.help !== undefined) throw new Error(`Line ${number}: second HELP for "${name}"`);
        family.help = unescape(rest, number, false);
      } else {
        if (family.samples.length > 0 || typed.has(name)) {
          throw new Error(`Line ${number}: TYPE for "${name}" after its samples or twice`);
        }
        typed.add(name);
        if (!TYPES.has(rest)) throw new Error(`Line ${number}: unknown type "${rest}"`);
        family.type = rest;
      }
      return;
    }
    const sample = parseSample(line, number);
    const familyName = familyOf(sample.name, families, current);
    const family = open(familyName, number);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seenSeries.has(key)) throw new Error(`Line ${number}: duplicate series ${key}`);
    seenSeries.add(key);
    family.samples.push(sample);
  });
  for (const family of families.values()) {
    if (family.type === "histogram") checkHistogram(family);
    if (family.type === "counter") {
      for (const sample of family.samples) {
        if (!(sample.value >= 0)) {
          throw new Error(`Counter "${family.name}" has value ${sample.value}`);
        }
      }
    }
  }
  return families;
}

function familyOf(
  sampleName: string,
  families: Map<string, Family>,
  current: string | undefined,
): string {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sampleName.endsWith(suffix)) continue;
    const base = sampleName.slice(0, -suffix.length);
    const type = families.get(base)?.type;
    if (base === current && (type === "histogram" || type === "summary")) return base;
  }
  return sampleName;
}

function parseSample(line: string, number: number): Sample {
  const head = new RegExp(`^(${NAME})`).exec(line);
  if (!head) throw new Error(`Line ${number}: no metric name`);
  const name = head[1]!;
  let position = name.length;
  const labels: Record<string, string> = {};
  if (line[position] === "{") {
    position++;
    while (line[position] !== "}") {
      const label = new RegExp(`^(${LABEL})="`, "y");
      label.lastIndex = 0;
      const match = label.exec(line.slice(position));
      if (!match) throw new Error(`Line ${number}: malformed label at column ${position + 1}`);
      const labelName = match[1]!;
      if (labelName in labels) throw new Error(`Line ${number}: label "${labelName}" twice`);
      position += match[0].length;
      let raw = "";
      while (line[position] !== '"') {
        if (position >= line.length) throw new Error(`Line ${number}: unterminated label value`);
        if (line[position] === "\\") {
          raw += line.slice(position, position + 2);
          position += 2;
        } else raw += line[position++];
      }
      position++;
      labels[labelName] = unescape(raw, number, true);
      if (line[position] === ",") position++;
      else if (line[position] !== "}") {
        throw new Error(`Line ${number}: expected , or } after a label`);
      }
    }
    position++;
  }
  const rest = line.slice(position);
  const parts = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
  if (!parts) throw new Error(`Line ${number}: expected " VALUE [TIMESTAMP]", got "${rest}"`);
  return { name, labels, value: parseFloatStrict(parts[1]!, number) };
}

function parseFloatStrict(text: string, number: number): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  if (!FLOAT.test(text)) throw new Error(`Line ${number}: "${text}" is not a number`);
  return Number(text);
}

function unescape(text: string, number: number, quoteAllowed: boolean): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === "\n") throw new Error(`Line ${number}: raw newline`);
    if (char !== "\\") {
      out += char;
      continue;
    }
    const next = text[++i];
    if (next === "\\") out += "\\";
    else if (next === "n") out += "\n";
    else if (next === '"' && quoteAllowed) out += '"';
    else throw new Error(`Line ${number}: invalid escape "\\${next ?? ""}"`);
  }
  return out;
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let group = groups.get(key);
    if (!group) groups.set(key, group = { buckets: [] });
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`Histogram "${family.name}" bucket without le`);
      group.buckets.push([parseFloatStrict(le, 0), sample.value]);
    } else if (sample.name === `${family.name}_sum`) group.sum = sample.value;
    else if (sample.name === `${family.name}_count`) group.count = sample.value;
    else throw new Error(`Histogram "${family.name}" has a foreign sample "${sample.name}"`);
  }
  for (const [key, group] of groups) {
    const where = `histogram "${family.name}" ${key}`;
    if (group.sum === undefined || group.count === undefined) {
      throw new Error(`No _sum or _count in ${where}`);
    }
    const last = group.buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`No +Inf bucket last in ${where}`);
    if (last[1] !== group.count) throw new Error(`+Inf bucket differs from _count in ${where}`);
    for (let i = 1; i < group.buckets.length; i++) {
      const [le, count] = group.buckets[i]!;
      const [previousLe, previousCount] = group.buckets[i - 1]!;
      if (!(le > previousLe)) throw new Error(`Buckets out of order in ${where}`);
      if (count < previousCount) throw new Error(`Bucket counts decrease in ${where}`);
    }
  }
}
