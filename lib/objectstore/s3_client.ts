import { AwsClient } from "aws4fetch";

/** The standard AWS credentials, as `AWS_ACCESS_KEY_ID` and friends hold them. */
export interface S3Credentials {
  /** `AWS_ACCESS_KEY_ID`. */
  accessKeyId: string;
  /** `AWS_SECRET_ACCESS_KEY`. */
  secretAccessKey: string;
  /** `AWS_SESSION_TOKEN`, for temporary credentials. */
  sessionToken?: string | undefined;
}

/** Options for {@linkcode S3Client}. */
export interface S3ClientOptions {
  /** The bucket. */
  bucket: string;
  /** Region for request signing. @default {"us-east-1"} */
  region?: string | undefined;
  /**
   * The service's base URL (MinIO, R2, a local server).
   *
   * @default {`https://s3.REGION.amazonaws.com`}
   */
  endpoint?: string | undefined;
  /**
   * Address the bucket in the path (`ENDPOINT/BUCKET/KEY`) rather than the host name.
   *
   * @default {true when an endpoint is given, else false}
   */
  pathStyle?: boolean | undefined;
  /** Who signs the requests. */
  credentials: S3Credentials;
  /** Longest wait for one request. @default {30000} */
  timeoutMs?: number | undefined;
}

/** A request the object store refused or could not answer; carries no secret. */
export class S3Error extends Error {
  /** HTTP status, or 0 when no answer came (connection refused, timeout). */
  readonly status: number;
  /** The service's error code (`NoSuchBucket`, `AccessDenied`…), or `""`. */
  readonly code: string;

  /**
   * Makes the error for one request.
   *
   * @param what The request, e.g. `PUT objects/ab/ab12…`.
   * @param status HTTP status, 0 without an answer.
   * @param code The service's error code.
   * @param detail The service's message or the network error.
   */
  constructor(what: string, status: number, code: string, detail: string, options?: ErrorOptions) {
    const answer = status === 0 ? "no answer" : `${status}${code === "" ? "" : ` ${code}`}`;
    super(`Object store ${what}: ${answer}${detail === "" ? "" : ` (${detail})`}`, options);
    this.name = "S3Error";
    this.status = status;
    this.code = code;
  }
}

/** What a HEAD of an object tells. */
export interface ObjectHead {
  /** Its size in bytes. */
  size: number;
}

const XML_ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&apos;": "'",
};

function xmlText(xml: string, tag: string): string[] {
  const out: string[] = [];
  for (const match of xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, "g"))) {
    out.push(match[1]!.replace(/&(amp|lt|gt|quot|apos);/g, (entity) => XML_ENTITIES[entity]!));
  }
  return out;
}

/** How many times one request is sent at most, the first included (see {@linkcode s3RetryDelay}). */
export const S3_ATTEMPTS = 3;

/**
 * How long to wait before sending a request again, or `null` to give up: S3 asks clients to
 * retry an internal error (500), `SlowDown` (503) and the other 5xx answers, and 429, with
 * exponential backoff; a request nobody answered (status 0: connection refused or reset) is
 * tried again too. Other answers (2xx, 3xx, 4xx) are final. Pure.
 *
 * @param attempt The attempt that just failed, from 1.
 * @param status Its HTTP status, 0 when nobody answered.
 * @param random A number in [0, 1) that spreads the clients' retries (jitter).
 * @returns Milliseconds to wait (100 then 200 at most, half of it random), or `null`.
 * @example
 * ```ts
 * s3RetryDelay(1, 503, 0.5); // 75
 * s3RetryDelay(1, 404, 0.5); // null
 * ```
 */
export function s3RetryDelay(attempt: number, status: number, random: number): number | null {
  if (attempt >= S3_ATTEMPTS) return null;
  if (status !== 0 && status !== 429 && status < 500) return null;
  return Math.round(100 * 2 ** (attempt - 1) * (0.5 + random / 2));
}

/**
 * A small S3 client on signed `fetch` (AWS Signature V4 by `aws4fetch`): put, get, head,
 * list and delete, each bounded by a timeout. A request the service answers with a
 * transient error (5xx, 429) or that finds nobody answering is sent again, up to
 * {@linkcode S3_ATTEMPTS} times in all (see {@linkcode s3RetryDelay}): every request here is
 * idempotent. Longer outages are the callers' (the uploader backs off and tries again).
 * Works with AWS S3 and S3-compatible services (MinIO, R2, Ceph, local test servers).
 */
export class S3Client {
  /** The bucket every request addresses. */
  readonly bucket: string;
  readonly #aws: AwsClient;
  readonly #bucketUrl: string;
  readonly #timeoutMs: number;

  /**
   * Prepares a client; nothing is sent until a request is made.
   *
   * @param options Bucket, endpoint, region, addressing and credentials.
   * @throws {TypeError} When the endpoint is not an http(s) URL or credentials are empty.
   */
  constructor(options: S3ClientOptions) {
    const region = options.region ?? "us-east-1";
    if (options.credentials.accessKeyId === "" || options.credentials.secretAccessKey === "") {
      throw new TypeError(
        "Object store credentials are missing: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
      );
    }
    const endpoint = new URL(options.endpoint ?? `https://s3.${region}.amazonaws.com`);
    if (endpoint.protocol !== "http:" && endpoint.protocol !== "https:") {
      throw new TypeError(`S3 endpoint "${options.endpoint}" must be an http or https URL`);
    }
    const base = endpoint.href.replace(/\/$/, "");
    const pathStyle = options.pathStyle ?? options.endpoint !== undefined;
    this.bucket = options.bucket;
    this.#bucketUrl = pathStyle
      ? `${base}/${options.bucket}`
      : `${endpoint.protocol}//${options.bucket}.${endpoint.host}${
        endpoint.pathname.replace(/\/$/, "")
      }`;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#aws = new AwsClient({
      accessKeyId: options.credentials.accessKeyId,
      secretAccessKey: options.credentials.secretAccessKey,
      ...(options.credentials.sessionToken
        ? { sessionToken: options.credentials.sessionToken }
        : {}),
      service: "s3",
      region,
      retries: 0,
    });
  }

  #url(key: string): string {
    return `${this.#bucketUrl}/${key.split("/").map(encodeURIComponent).join("/")}`;
  }

  async #send(what: string, url: string, init: RequestInit): Promise<Response> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    for (let attempt = 1;; attempt++) {
      let response: Response | null = null;
      let failure: unknown;
      try {
        response = await this.#aws.fetch(url, { ...init, signal });
      } catch (error) {
        failure = error;
      }
      // Past the timeout, nothing is sent again: the caller's bound holds.
      const delayMs = signal.aborted
        ? null
        : s3RetryDelay(attempt, response?.status ?? 0, Math.random());
      if (delayMs === null) {
        if (response !== null) return response;
        const detail = failure instanceof Error ? failure.message : String(failure);
        throw new S3Error(what, 0, "", detail, { cause: failure });
      }
      await response?.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }

  async #fail(what: string, response: Response): Promise<never> {
    const body = await response.text().catch(() => "");
    const code = xmlText(body, "Code")[0] ?? "";
    const message = xmlText(body, "Message")[0] ?? "";
    throw new S3Error(what, response.status, code, message);
  }

  /**
   * Stores `bytes` under `key`, replacing what is there.
   *
   * @param key The object's key.
   * @param bytes Its content.
   * @param contentType Its media type. @default {"application/octet-stream"}
   * @throws {S3Error} When the service refuses or does not answer.
   */
  async putObject(
    key: string,
    bytes: Uint8Array,
    contentType = "application/octet-stream",
  ): Promise<void> {
    const what = `PUT ${key}`;
    const response = await this.#send(what, this.#url(key), {
      method: "PUT",
      body: bytes as Uint8Array<ArrayBuffer>,
      headers: { "content-type": contentType, "content-length": `${bytes.length}` },
    });
    if (!response.ok) await this.#fail(what, response);
    await response.body?.cancel();
  }

  /**
   * Reads an object.
   *
   * @param key The object's key.
   * @returns Its bytes, or `null` when there is no such key.
   * @throws {S3Error} When the service refuses (other than not found) or does not answer.
   */
  async getObject(key: string): Promise<Uint8Array | null> {
    const what = `GET ${key}`;
    const response = await this.#send(what, this.#url(key), { method: "GET" });
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    if (!response.ok) await this.#fail(what, response);
    try {
      return new Uint8Array(await response.arrayBuffer());
    } catch (error) {
      throw new S3Error(what, response.status, "", "the answer was cut", { cause: error });
    }
  }

  /**
   * Tells whether an object exists, and its size.
   *
   * @param key The object's key.
   * @returns Its size, or `null` when there is no such key.
   * @throws {S3Error} When the service refuses (other than not found) or does not answer.
   */
  async headObject(key: string): Promise<ObjectHead | null> {
    const what = `HEAD ${key}`;
    const response = await this.#send(what, this.#url(key), { method: "HEAD" });
    await response.body?.cancel();
    if (response.status === 404) return null;
    if (!response.ok) throw new S3Error(what, response.status, "", "");
    return { size: Number(response.headers.get("content-length") ?? "0") };
  }

  /**
   * Lists every key under a prefix, page by page (ListObjectsV2).
   *
   * @param prefix Keys must start with this.
   * @returns The keys, in the service's (lexicographic) order.
   * @throws {S3Error} When the service refuses or does not answer.
   */
  async *listKeys(prefix: string): AsyncGenerator<string> {
    let token: string | undefined;
    do {
      const query = new URLSearchParams({ "list-type": "2", prefix });
      if (token !== undefined) query.set("continuation-token", token);
      const what = `LIST ${prefix}`;
      const response = await this.#send(what, `${this.#bucketUrl}?${query}`, { method: "GET" });
      if (!response.ok) await this.#fail(what, response);
      const xml = await response.text();
      yield* xmlText(xml, "Key");
      token = xmlText(xml, "IsTruncated")[0] === "true"
        ? xmlText(xml, "NextContinuationToken")[0]
        : undefined;
    } while (token !== undefined);
  }

  /**
   * Deletes an object; deleting a key that is not there succeeds.
   *
   * @param key The object's key.
   * @throws {S3Error} When the service refuses or does not answer.
   */
  async deleteObject(key: string): Promise<void> {
    const what = `DELETE ${key}`;
    const response = await this.#send(what, this.#url(key), { method: "DELETE" });
    if (!response.ok && response.status !== 404) await this.#fail(what, response);
    await response.body?.cancel();
  }
}
