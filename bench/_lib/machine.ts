/**
 * What machine a benchmark ran on: CPUs, memory, CPU model, kernel, Deno.
 *
 * @module
 */

/** The machine a run was recorded on. */
export interface MachineInfo {
  /** Processing units available (`nproc`). */
  cpus: number;
  /** Total memory in bytes (`MemTotal` of /proc/meminfo), `null` when unknown. */
  memoryBytes: number | null;
  /** CPU model (`model name` of /proc/cpuinfo), `null` when unknown. */
  cpuModel: string | null;
  /** Kernel release (`uname -r`). */
  kernel: string;
  /** Deno, V8 and TypeScript versions. */
  deno: string;
}

/**
 * Reads `MemTotal` from the text of /proc/meminfo.
 *
 * @param meminfo The file's text.
 * @returns Bytes, or `null` when the line is missing.
 *
 * @example
 * ```ts
 * import { parseMemTotal } from "./machine.ts";
 * if (parseMemTotal("MemTotal: 2048 kB\n") !== 2048 * 1024) throw new Error("wrong total");
 * ```
 */
export function parseMemTotal(meminfo: string): number | null {
  const match = /^MemTotal:\s+(\d+)\s*kB/m.exec(meminfo);
  return match ? Number(match[1]) * 1024 : null;
}

/**
 * Reads the first `model name` from the text of /proc/cpuinfo.
 *
 * @param cpuinfo The file's text.
 * @returns The model, or `null` when no such line exists (some ARM kernels).
 *
 * @example
 * ```ts
 * import { parseCpuModel } from "./machine.ts";
 * if (parseCpuModel("model name\t: Fast CPU\n") !== "Fast CPU") throw new Error("wrong model");
 * ```
 */
export function parseCpuModel(cpuinfo: string): string | null {
  const match = /^model name\s*:\s*(.+)$/m.exec(cpuinfo);
  return match ? match[1]!.trim() : null;
}

/**
 * Describes this machine. Each figure falls back to what Deno knows when its command or
 * file is missing.
 *
 * @returns CPUs, memory, CPU model, kernel and Deno versions.
 */
export async function describeMachine(): Promise<MachineInfo> {
  const nproc = Number(await commandText("nproc"));
  const kernel = await commandText("uname", ["-r"]) ?? Deno.osRelease();
  return {
    cpus: Number.isInteger(nproc) && nproc > 0 ? nproc : navigator.hardwareConcurrency,
    memoryBytes: parseMemTotal(await fileText("/proc/meminfo") ?? ""),
    cpuModel: parseCpuModel(await fileText("/proc/cpuinfo") ?? ""),
    kernel,
    deno:
      `Deno ${Deno.version.deno} (V8 ${Deno.version.v8}, TypeScript ${Deno.version.typescript})`,
  };
}

/**
 * One line describing the machine, for a results file.
 *
 * @param info From {@linkcode describeMachine}.
 * @returns E.g. `2 CPUs (Intel ...), 23.4 GiB memory, Linux 6.1.0, Deno 2.9.6 (...)`.
 */
export function machineLine(info: MachineInfo): string {
  const memory = info.memoryBytes === null
    ? "unknown memory"
    : `${(info.memoryBytes / 1024 ** 3).toFixed(1)} GiB memory`;
  return `${info.cpus} CPUs (${info.cpuModel ?? "unknown model"}), ${memory}, ` +
    `kernel ${info.kernel}, ${info.deno}`;
}

async function commandText(command: string, args: string[] = []): Promise<string | null> {
  try {
    const output = await new Deno.Command(command, { args, stdout: "piped", stderr: "null" })
      .output();
    return output.success ? new TextDecoder().decode(output.stdout).trim() : null;
  } catch {
    return null;
  }
}

async function fileText(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return null;
  }
}
