/**
 * A corpus of real files: npm packages installed into a temporary folder at bench time,
 * so the benchmarks also run on what agents really hold (a `node_modules` full of tiny
 * `.js`, `.d.ts` and `.map` files, deep paths, a long tail of large bundles, `.bin` links).
 *
 * @module
 */

/** The packages of the full corpus: the tree on which replication once broke. */
export const FULL_NPM_PACKAGES = ["typescript", "eslint", "webpack", "@babel/core", "lodash"];
/** The quick corpus: one package of about a thousand small files. */
export const QUICK_NPM_PACKAGES = ["lodash"];

/** What {@linkcode installNpmCorpus} made. */
export interface NpmCorpus {
  /** The folder holding `node_modules`, `package.json` and the lock file. */
  root: string;
  /** The packages asked for. */
  packages: string[];
}

/**
 * Installs `packages` with npm into `root` (which must exist), without running any
 * package's scripts.
 *
 * @param root An empty folder.
 * @param packages Package names, as `npm install` takes them.
 * @returns The corpus, or `null` when npm is missing or the registry cannot be reached
 *   (the caller reports the corpus as unavailable).
 */
export async function installNpmCorpus(
  root: string,
  packages: string[],
): Promise<NpmCorpus | null> {
  try {
    const { success } = await new Deno.Command("npm", {
      args: [
        "install",
        "--prefix",
        root,
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--loglevel=error",
        ...packages,
      ],
      stdout: "null",
      stderr: "null",
    }).output();
    return success ? { root, packages } : null;
  } catch {
    return null;
  }
}
