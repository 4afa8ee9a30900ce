/**
 * A real S3-compatible server for the tests: `s3rver` from npm, run by Deno as a child
 * process on a loopback port, with its data in a temp folder so it can be stopped and
 * started again on the same port with the same objects.
 *
 * @module
 */
import { S3Client } from "../../lib/objectstore/mod.ts";

/** The package the tests run; pinned so every run talks to the same server. */
const S3RVER = "npm:s3rver@3.7.1";

/** The credentials s3rver accepts. */
export const S3_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

/** The environment a Chronicle process needs to reach the test server. */
export const S3_ENV = {
  AWS_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey,
};

/** A running (or stopped) test server. */
export class S3Server {
  /** `http://127.0.0.1:PORT`. */
  endpoint = "";
  /** The bucket made at start. */
  readonly bucket: string;
  readonly #dataDir: string;
  #port = 0;
  #child: Deno.ChildProcess | null = null;
  #output = "";
  #drained: Promise<unknown> = Promise.resolve();

  private constructor(dataDir: string, bucket: string) {
    this.#dataDir = dataDir;
    this.bucket = bucket;
  }

  /**
   * Starts a server with one bucket.
   *
   * @param bucket The bucket's name. @default {"chronicle-test"}
   */
  static async start(bucket = "chronicle-test"): Promise<S3Server> {
    const server = new S3Server(await Deno.makeTempDir({ prefix: "chronicle-s3-" }), bucket);
    await server.restart();
    return server;
  }

  /** Starts the server again (on the same port once it has one), keeping its objects. */
  async restart(): Promise<void> {
    if (this.#child !== null) throw new Error("The S3 server is running");
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        S3RVER,
        "-d",
        this.#dataDir,
        "-a",
        "127.0.0.1",
        "-p",
        String(this.#port),
        "--configure-bucket",
        this.bucket,
      ],
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).spawn();
    this.#child = child;
    const decoder = new TextDecoder();
    let announced: (port: number) => void = () => {};
    const listening = new Promise<number>((resolve) => (announced = resolve));
    const drain = async (stream: ReadableStream<Uint8Array>) => {
      for await (const chunk of stream) {
        this.#output = (this.#output + decoder.decode(chunk, { stream: true })).slice(-20_000);
        const match = /listening on 127\.0\.0\.1:(\d+)/.exec(this.#output);
        if (match) announced(Number(match[1]));
      }
    };
    this.#drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
    const exited = child.status.then((status) => {
      throw new Error(`s3rver exited (${status.code}) before listening: ${this.#output}`);
    });
    exited.catch(() => {}); // once listening, its end is awaited by stop()
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`s3rver did not start: ${this.#output}`)), 120_000);
    });
    try {
      this.#port = await Promise.race([listening, exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
    this.#output = "";
    this.endpoint = `http://127.0.0.1:${this.#port}`;
  }

  /** A client of the bucket, path-style, with the server's credentials. */
  client(): S3Client {
    return new S3Client({
      bucket: this.bucket,
      endpoint: this.endpoint,
      credentials: S3_CREDENTIALS,
      timeoutMs: 10_000,
    });
  }

  /** Stops the server; its objects stay for {@linkcode S3Server.restart}. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (child === null) return;
    this.#child = null;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await this.#drained;
  }

  /** Stops the server and removes its objects. */
  async close(): Promise<void> {
    await this.stop();
    await Deno.remove(this.#dataDir, { recursive: true }).catch(() => {});
  }
}
