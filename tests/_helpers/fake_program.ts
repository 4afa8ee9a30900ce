/**
 * A stand-in for a program a child process runs (`sync`, say): a shell script first on
 * the child's PATH.
 *
 * @param dir A folder of the test's, where a `bin/` folder is made.
 * @param name The program's name.
 * @param script The shell script's body.
 * @returns The environment to give the child.
 */
export async function fakeProgram(
  dir: string,
  name: string,
  script: string,
): Promise<Record<string, string>> {
  const bin = `${dir}/bin`;
  await Deno.mkdir(bin, { recursive: true });
  await Deno.writeTextFile(`${bin}/${name}`, `#!/bin/sh\n${script}\n`);
  await Deno.chmod(`${bin}/${name}`, 0o755);
  return { PATH: `${bin}:${Deno.env.get("PATH") ?? ""}` };
}
