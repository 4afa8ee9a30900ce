import { join, resolve } from "node:path";
import { checkpoint, CheckpointError, rehydrate } from "../checkpoint/mod.ts";
import { resolveLayout, type WorkspaceLayout } from "../workspace/mod.ts";
import { CliError, UsageError } from "./errors.ts";
import { LOCATE_ARGS, locateFromArgs } from "./locate_workspace.ts";
import { nonEmpty } from "./non_empty.ts";
import { formatBytes, printJson, println } from "./output.ts";
import { parseCommandArgs } from "./parse_command_args.ts";
import { Store, WORKSPACE_ROOT_META } from "../store/mod.ts";
import {
  type BucketRehydrateResult,
  checkpointToBucket,
  openBucket,
  type OpenedBucket,
  rehydrateFromBucket,
  S3Error,
} from "../objectstore/mod.ts";

/** The flags that say how to reach an S3-compatible bucket. */
const S3_ARGS = {
  "s3-endpoint": { type: "string" },
  "s3-region": { type: "string" },
  "s3-path-style": { type: "boolean" },
} as const;

/** The bucket a `s3://` location names, with credentials from the environment. */
function bucketFromArgs(
  location: string,
  values: { "s3-endpoint"?: string; "s3-region"?: string; "s3-path-style"?: boolean },
): OpenedBucket {
  const env = Deno.env.toObject();
  try {
    return openBucket({
      location,
      endpoint: values["s3-endpoint"] ?? nonEmpty(env.CHRONICLE_S3_ENDPOINT),
      region: values["s3-region"] ?? nonEmpty(env.CHRONICLE_S3_REGION),
      pathStyle: values["s3-path-style"],
      env,
    });
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * `chronicle checkpoint [-C WS] [--data-dir D] [--output DIR] [--with-objects] [--json]`:
 * writes a consistent copy of the workspace's database, `objects.txt` and
 * `checkpoint.json` (with `--with-objects`, the objects too) into DIR, by default
 * `DATA/checkpoints/checkpoint-<UTC time>`. Works while Chronicle runs. Without `-C` or
 * `--data-dir`, `CHRONICLE_WORKSPACE` and `CHRONICLE_DATA_DIR` are used, else the
 * workspace is found upwards from the current folder.
 *
 * @param args Arguments after `checkpoint`.
 * @returns 0 once the checkpoint is complete.
 * @throws {UsageError} For bad arguments.
 * @throws {CliError} When no workspace is found or the checkpoint cannot be made.
 */
export async function checkpointCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("checkpoint", args, {
    ...LOCATE_ARGS,
    output: { type: "string", short: "o" },
    "with-objects": { type: "boolean" },
    to: { type: "string" },
    keep: { type: "string" },
    ...S3_ARGS,
    json: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError(`chronicle checkpoint takes no arguments, got "${positionals[0]}"`);
  }
  const layout = locateFromArgs(values);
  if (values.to !== undefined) {
    if (values.output !== undefined || values["with-objects"]) {
      throw new UsageError("--to s3://… takes neither --output nor --with-objects");
    }
    const keep = values.keep === undefined ? 10 : Number(values.keep);
    if (!Number.isSafeInteger(keep) || keep < 1) {
      throw new UsageError(`Invalid --keep "${values.keep}": expected a whole number from 1`);
    }
    const { client, prefix } = bucketFromArgs(values.to, values);
    const result = await translate(() =>
      checkpointToBucket({
        database: layout.database,
        casDir: layout.casDir,
        client,
        prefix,
        keep,
      })
    );
    if (values.json) printJson(result);
    else {
      println(`checkpoint ${result.location}`);
      println(
        `sequence ${result.sequence}, ${result.paths} paths, ${result.iterations} iterations, ${result.objects} objects`,
      );
      println(
        `uploaded ${
          formatBytes(result.uploadedBytes)
        }; ${result.alreadyThere} objects were in the bucket already`,
      );
      if (result.removed.length > 0) {
        println(`removed old checkpoints: ${result.removed.join(", ")}`);
      }
    }
    return 0;
  }
  const output = values.output !== undefined
    ? resolve(values.output)
    : join(layout.dataDir, "checkpoints", `checkpoint-${stamp(new Date())}`);
  const result = await translate(() =>
    checkpoint({
      database: layout.database,
      casDir: layout.casDir,
      output,
      withObjects: values["with-objects"] ?? false,
    })
  );
  if (values.json) {
    printJson(result);
    return 0;
  }
  println(`checkpoint ${result.output}`);
  println(
    `sequence ${result.sequence}, ${result.paths} paths, ${result.iterations} iterations, ${result.objects} objects`,
  );
  println(`database ${formatBytes(result.databaseBytes)}, sha256 ${result.databaseSha256}`);
  println(
    result.withObjects
      ? `objects copied: ${result.copiedFiles} files, ${formatBytes(result.copiedBytes)}`
      : "objects not copied: rehydrate needs this CAS or a copy of it (see objects.txt)",
  );
  return 0;
}

/**
 * `chronicle rehydrate --from DIR [-C WS] [--data-dir D] [--database F] [--cas-dir D]
 * [--force] [--json]`: brings a workspace back from a checkpoint: verifies it, completes
 * the CAS from it, installs the database and writes the latest tree into the workspace;
 * without `--force` it refuses an existing database or a non-empty workspace (naming the
 * files that would be replaced). The workspace is `-C`, else `CHRONICLE_WORKSPACE`, else the
 * current folder. Run it before starting Chronicle there.
 *
 * @param args Arguments after `rehydrate`.
 * @returns 0 when every path was written, 1 when some could not be (each is listed).
 * @throws {UsageError} For bad arguments or a missing `--from`.
 * @throws {CliError} When the checkpoint is unusable or the database exists.
 */
export async function rehydrateCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("rehydrate", args, {
    ...LOCATE_ARGS,
    from: { type: "string" },
    force: { type: "boolean" },
    eager: { type: "boolean" },
    checkpoint: { type: "string" },
    ...S3_ARGS,
    json: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError(`chronicle rehydrate takes no arguments, got "${positionals[0]}"`);
  }
  if (values.from === undefined || values.from === "") {
    throw new UsageError(
      "Usage: chronicle rehydrate --from CHECKPOINT_DIR [-C WORKSPACE] [--data-dir DIR]",
    );
  }
  const env = Deno.env.toObject();
  const layout: WorkspaceLayout = resolveLayout({
    root: values.C ?? nonEmpty(env.CHRONICLE_WORKSPACE) ?? Deno.cwd(),
    dataDir: values["data-dir"] ?? nonEmpty(env.CHRONICLE_DATA_DIR),
    database: values.database,
    casDir: values["cas-dir"],
  });
  const fromBucket = values.from.startsWith("s3://");
  if (!fromBucket && (values.eager || values.checkpoint !== undefined)) {
    throw new UsageError("--eager and --checkpoint go with --from s3://…");
  }
  const options = {
    database: layout.database,
    casDir: layout.casDir,
    workspace: layout.root,
    dataDir: layout.dataDir,
    force: values.force ?? false,
  };
  const result = await translate(() =>
    fromBucket
      ? rehydrateFromBucket({
        ...bucketFromArgs(values.from!, values),
        ...options,
        id: values.checkpoint,
        eager: values.eager ?? false,
      })
      : rehydrate({ from: values.from!, ...options })
  );
  const store = Store.open(layout.database);
  try {
    store.setMeta(WORKSPACE_ROOT_META, layout.root);
  } finally {
    store.close();
  }
  if (values.json) printJson({ workspace: layout.root, database: layout.database, ...result });
  else {
    println(`rehydrated ${layout.root} to sequence ${result.checkpoint.sequence}`);
    println(
      `${result.files} files (${
        formatBytes(result.bytes)
      }), ${result.symlinks} symlinks; objects copied ${result.objectsCopied}, already present ${result.objectsPresent}`,
    );
    if (fromBucket) {
      const { fetchedObjects, fetchedBytes } = result as BucketRehydrateResult;
      println(
        `fetched from the bucket: ${fetchedObjects} objects (${formatBytes(fetchedBytes)}); ` +
          `${result.objectsDeferred} more stay there until read (run Chronicle with --object-store ${values.from})`,
      );
    }
    if (result.replaced.length > 0) {
      println(`replaced (--force): ${result.replaced.join(", ")}`);
    }
    for (const problem of result.problems) {
      println(`not written: ${problem.path}: ${problem.reason}`);
    }
  }
  if (result.problems.length > 0) {
    throw new CliError(`${result.problems.length} path(s) could not be written`);
  }
  return 0;
}

async function translate<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CheckpointError || error instanceof S3Error) {
      throw new CliError(error.message, { cause: error });
    }
    throw error;
  }
}

function stamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
}
