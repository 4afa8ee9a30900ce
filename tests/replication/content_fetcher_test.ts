/**
 * The replica's content fetcher against a responder serving a real CAS over a real Unix
 * socket, including answers corrupted on the way.
 */
import { metrics } from "../../lib/metrics/mod.ts";
import { waitFor } from "../_helpers/wait_for.ts";
import { assert, assertEquals, assertRejects } from "./_assert.ts";
import { pseudoRandomBytes } from "./_harness.ts";
import { Cas, ContentNotFoundError, sha256Hex } from "../../lib/cas/mod.ts";
import { HeldByMasterError, MasterContentTier } from "../../lib/replication/master_content_tier.ts";
import { PartialContents } from "../../lib/replication/partial_contents.ts";
import {
  ContentFetcher,
  type ContentFetcherOptions,
  ContentUnavailableError,
} from "../../lib/replication/content_fetcher.ts";
import {
  answerContentFetch,
  connectUnix,
  listenUnix,
  type Transport,
} from "../../lib/replication/mod.ts";

interface Setup {
  source: Cas;
  target: Cas;
  fetcher: ContentFetcher;
  /** Hashes whose next answer is corrupted (one flipped byte), with a count per hash. */
  corrupt: Map<string, number>;
  requests: string[];
}

interface FetcherTestOptions {
  /** The fetcher's limits. @default {{ concurrency: 4 }} */
  limits?: Pick<ContentFetcherOptions, "concurrency" | "budgetBytes">;
  /** Sends (or holds) each answer: at once by default. */
  release?: (sendAnswer: () => Promise<void>) => Promise<void>;
}

async function withFetcher(
  work: (setup: Setup) => Promise<void>,
  options: FetcherTestOptions = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-fetch-" });
  const source = await Cas.open(`${dir}/source`);
  const target = await Cas.open(`${dir}/target`);
  const corrupt = new Map<string, number>();
  const requests: string[] = [];
  const release = options.release ?? ((sendAnswer) => sendAnswer());
  let serverSide: Transport | undefined;
  const server = await listenUnix({
    path: `${dir}/s.sock`,
    onTransport: async (transport) => {
      serverSide = transport;
      for await (const message of transport.messages()) {
        if (message.type !== "ContentFetchRequest") continue;
        const hash = message.content_hash;
        requests.push(hash);
        await release(async () => {
          const answer = await answerContentFetch(source, hash, transport.maxPayload);
          const left = corrupt.get(hash) ?? 0;
          if (left > 0 && answer.type === "ContentFetchResponse" && answer.content.length > 0) {
            corrupt.set(hash, left - 1);
            answer.content = answer.content.slice();
            answer.content[0]! ^= 0xff;
          }
          await transport.send(answer);
        });
      }
    },
  });
  const client = await connectUnix(`${dir}/s.sock`);
  const fetcher = new ContentFetcher({
    cas: target,
    send: (m) => client.send(m),
    ...(options.limits ?? { concurrency: 4 }),
  });
  const reading = (async () => {
    for await (const message of client.messages()) {
      if (message.type === "ContentFetchResponse" || message.type === "ContentNotFound") {
        fetcher.onAnswer(message);
      }
    }
  })();
  try {
    await work({ source, target, fetcher, corrupt, requests });
  } finally {
    client.close();
    serverSide?.close();
    await reading;
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("ContentFetcher fetches whole content and shares concurrent requests", async () => {
  await withFetcher(async ({ source, target, fetcher, requests }) => {
    const bytes = pseudoRandomBytes(100_000, 1);
    const { hash } = await source.putBytes(bytes);
    const timedBefore = metrics.fetchLatency.get().count;
    await Promise.all([fetcher.ensure(hash), fetcher.ensure(hash), fetcher.ensure(hash)]);
    assertEquals(await target.readBytes(hash), bytes);
    assertEquals(requests, [hash]);
    await fetcher.ensure(hash); // already held: no request
    assertEquals(requests.length, 1);
    assertEquals(metrics.fetchLatency.get().count - timedBefore, 1, "one fetch timed");
  });
});

Deno.test("ContentFetcher looks only for the whole object of content it is told is small, and for a manifest otherwise", async () => {
  await withFetcher(async ({ source, target, fetcher, requests }) => {
    const small = await source.putBytes(pseudoRandomBytes(5_000, 3));
    const unsized = await source.putBytes(pseudoRandomBytes(5_000, 5));
    const large = await source.putBytes(pseudoRandomBytes(9 * 1024 * 1024, 4));
    assert(large.chunked);
    const manifestsAsked: string[] = [];
    const manifest = target.manifest.bind(target);
    target.manifest = (hash) => (manifestsAsked.push(hash), manifest(hash));
    await fetcher.ensure(small.hash, 5_000);
    assertEquals(manifestsAsked, [], "small content is never a manifest: none looked for");
    await fetcher.ensure(unsized.hash); // size unknown: looked for as either
    await fetcher.ensure(large.hash, 9 * 1024 * 1024);
    assertEquals(manifestsAsked.slice(0, 2), [unsized.hash, large.hash]);
    assertEquals(requests.slice(0, 3), [small.hash, unsized.hash, large.hash], "each fetched");
    for (const { hash } of [small, unsized, large]) {
      assertEquals(sha256Hex(await target.readBytes(hash)), hash);
    }
  });
});

Deno.test("ContentFetcher assembles chunked content, fetching only missing chunks", async () => {
  await withFetcher(async ({ source, target, fetcher, requests }) => {
    const bytes = pseudoRandomBytes(9 * 1024 * 1024, 2);
    const { hash, chunked } = await source.putBytes(bytes);
    assert(chunked);
    const manifest = (await source.manifest(hash))!;
    // The replica already holds the first chunk.
    const first = manifest.chunks[0]!;
    await target.putVerified(first.hash, bytes.subarray(first.offset, first.offset + first.size));
    await fetcher.ensure(hash);
    assertEquals(sha256Hex(await target.readBytes(hash)), hash);
    assert(!requests.includes(first.hash), "a held chunk was fetched again");
    assertEquals(requests.length, 1 + new Set(manifest.chunks.slice(1).map((c) => c.hash)).size);
  });
});

Deno.test("ContentFetcher discards corrupt answers and fetches again", async () => {
  await withFetcher(async ({ source, target, fetcher, corrupt, requests }) => {
    const bytes = pseudoRandomBytes(50_000, 3);
    const { hash } = await source.putBytes(bytes);
    corrupt.set(hash, 2);
    await fetcher.ensure(hash);
    assertEquals(await target.readBytes(hash), bytes);
    assertEquals(requests.length, 3);
    // Corrupt on every attempt: the fetch fails and nothing is stored.
    const other = await source.putBytes(pseudoRandomBytes(50_000, 4));
    corrupt.set(other.hash, 10);
    await assertRejects(() => fetcher.ensure(other.hash), Error, "corrupt");
    assert(!(await target.has(other.hash)));
  });
});

Deno.test("ContentFetcher reports content the master does not hold", async () => {
  await withFetcher(async ({ fetcher }) => {
    const missing = "cd".repeat(32);
    const error = await assertRejects(() => fetcher.ensure(missing), ContentUnavailableError);
    assertEquals(error.hash, missing);
  });
});

Deno.test("ContentFetcher fails requests in flight when the connection goes", async () => {
  await withFetcher(async ({ source, fetcher }) => {
    const { hash } = await source.putBytes(pseudoRandomBytes(10, 5));
    fetcher.fail(new Error("connection closed"));
    await assertRejects(() => fetcher.ensure(hash), Error, "connection closed");
  });
});

Deno.test("ContentFetcher keeps the bytes it expects in flight within its budget", async () => {
  // The master side answers only when the test says so, oldest request first.
  const unanswered: (() => Promise<void>)[] = [];
  const release = (sendAnswer: () => Promise<void>) => {
    unanswered.push(sendAnswer);
    return Promise.resolve();
  };
  // 100 KB each within 250 KB: two requests in flight at a time, never three.
  const limits = { concurrency: 64, budgetBytes: 250_000 };
  await withFetcher(async ({ source, target, fetcher, requests }) => {
    const hashes: string[] = [];
    for (let i = 0; i < 10; i++) {
      hashes.push((await source.putBytes(pseudoRandomBytes(100_000, 100 + i))).hash);
    }
    const done = Promise.all(hashes.map((hash) => fetcher.ensure(hash, 100_000)));
    let most = 0;
    for (let answered = 0; answered < 10; answered++) {
      await waitFor("the window to fill", () => requests.length >= Math.min(10, answered + 2));
      most = Math.max(most, requests.length - answered);
      await unanswered.shift()!();
    }
    await done;
    assertEquals(most, 2, "two requests of 100 KB fit in 250 KB, three do not");
    for (const hash of hashes) assertEquals(sha256Hex(await target.readBytes(hash)), hash);
  }, { limits, release });
});

Deno.test("ContentFetcher counts as needed only the fetches a caller waits on, until they settle", async () => {
  const held: (() => Promise<void>)[] = [];
  await withFetcher(async ({ source, target, fetcher, requests }) => {
    const prefetched = await source.putBytes(pseudoRandomBytes(5_000, 7));
    const wanted = await source.putBytes(pseudoRandomBytes(5_000, 8));
    const prefetch = fetcher.ensure(prefetched.hash);
    await waitFor("the prefetch's request", () => requests.length === 1);
    assertEquals(fetcher.needed, 0, "a prefetch is not needed");
    assertEquals(fetcher.inFlight, 1);
    const need = fetcher.need(wanted.hash);
    const needSame = fetcher.need(prefetched.hash); // joins the prefetch
    assertEquals(fetcher.needed, 2);
    // The responder takes one request at a time: answer each as it comes.
    for (let answered = 0; answered < 2; answered++) {
      await waitFor("a held answer", () => held.length === 1);
      // The first answer settles the need that joined the prefetch; the other stays.
      await waitFor(`${2 - answered} needed`, () => fetcher.needed === 2 - answered);
      await held.pop()!();
    }
    await Promise.all([prefetch, need, needSame]);
    assertEquals(fetcher.needed, 0);
    assertEquals(await target.readBytes(wanted.hash), pseudoRandomBytes(5_000, 8));
    // A need that fails (the connection is gone) is no longer counted either.
    const missing = await source.putBytes(pseudoRandomBytes(5_000, 9));
    const lost = fetcher.need(missing.hash);
    assertEquals(fetcher.needed, 1);
    fetcher.fail(new Error("connection closed"));
    await assertRejects(() => lost);
    assertEquals(fetcher.needed, 0);
  }, {
    release: (sendAnswer) => new Promise<void>((done) => held.push(() => sendAnswer().then(done))),
  });
});

Deno.test("ContentFetcher.fetchBytes hands over verified bytes without storing them, and shares concurrent fetches", async () => {
  await withFetcher(async ({ source, target, fetcher, corrupt, requests }) => {
    const bytes = pseudoRandomBytes(70_000, 6);
    const { hash } = await source.putBytes(bytes);
    corrupt.set(hash, 1); // the first answer arrives corrupt: asked again
    const [first, second] = await Promise.all([
      fetcher.fetchBytes(hash, bytes.length),
      fetcher.fetchBytes(hash, bytes.length),
    ]);
    assertEquals(first, bytes);
    assertEquals(second, bytes);
    assertEquals(requests, [hash, hash], "one fetch for both, asked again once");
    assert(!(await target.has(hash)), "nothing stored");
    assertEquals(fetcher.needed, 0);
    // Corrupt on every attempt: refused.
    const other = await source.putBytes(pseudoRandomBytes(5_000, 7));
    corrupt.set(other.hash, 10);
    await assertRejects(() => fetcher.fetchBytes(other.hash, 5_000), Error, "corrupt");
    await assertRejects(
      () => fetcher.fetchBytes("ab".repeat(32), 10),
      ContentUnavailableError,
    );
  });
});

Deno.test("ContentFetcher.fetchBytes stores content the master answers in chunks, and answers null", async () => {
  await withFetcher(async ({ source, target, fetcher }) => {
    const bytes = pseudoRandomBytes(9 * 1024 * 1024, 8);
    const { hash, chunked } = await source.putBytes(bytes);
    assert(chunked);
    // A size that lies (small) still gets the content, in the CAS.
    assertEquals(await fetcher.fetchBytes(hash, 100), null);
    assertEquals(sha256Hex(await target.readBytes(hash)), hash);
  });
});

Deno.test("MasterContentTier reads what the CAS lacks through the connection, verified and kept; without one it says where the content is", async () => {
  await withFetcher(async ({ source, target, fetcher, corrupt }) => {
    const tier = new MasterContentTier();
    target.setTier(tier);
    const whole = pseudoRandomBytes(80_000, 9);
    const chunkedBytes = pseudoRandomBytes(9 * 1024 * 1024, 10);
    const { hash } = await source.putBytes(whole);
    const chunked = await source.putBytes(chunkedBytes);
    const error = await assertRejects(() => target.readBytes(hash), HeldByMasterError);
    assert(error instanceof ContentNotFoundError, "a kind of content not found");
    assert(error.message.includes("held by the master"), error.message);
    tier.attach(fetcher);
    assertEquals(await target.readBytes(hash), whole);
    assert(await target.hasObject(hash), "kept once read");
    assertEquals(sha256Hex(await target.readBytes(chunked.hash)), chunked.hash);
    // A corrupt answer is never handed on.
    const other = await source.putBytes(pseudoRandomBytes(3_000, 11));
    corrupt.set(other.hash, 1);
    await assertRejects(() => target.readBytes(other.hash), Error, "corrupt");
    assert(!(await target.hasObject(other.hash)));
    await assertRejects(() => target.readBytes("ef".repeat(32)), ContentNotFoundError);
    // `has` asks the tier only when told to, and keeps what it answers.
    const asked = await source.putBytes(pseudoRandomBytes(6_000, 13));
    assertEquals(await target.has(asked.hash), false);
    assertEquals(await target.has(asked.hash, { throughTier: true }), true);
    assertEquals(await target.has(asked.hash), true);
    assertEquals(await target.has("ef".repeat(32), { throughTier: true }), false);
    tier.detach(fetcher);
    const last = await source.putBytes(pseudoRandomBytes(3_000, 12));
    await assertRejects(() => target.readBytes(last.hash), HeldByMasterError);
    // Its reason is the tier's: not a plain "not here".
    await assertRejects(() => target.has(last.hash, { throughTier: true }), HeldByMasterError);
  });
});

Deno.test("MasterContentTier asks a read again on the next connection, in ranges, once the one it was asked on ends; a replica closing ends the wait", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-tier-" });
  try {
    const source = await Cas.open(`${dir}/source`);
    const target = await Cas.open(`${dir}/target`);
    const tier = new MasterContentTier();
    target.setTier(tier);
    // Kept across connections, as ReplicaCore keeps it.
    const partials = new PartialContents();
    // A connection's fetcher: answered from `source` by the master's own code, or never.
    const connection = (answers: boolean) => {
      const asked: string[] = [];
      const fetcher: ContentFetcher = new ContentFetcher({
        cas: target,
        partials,
        send: async (message) => {
          if (message.type !== "ContentFetchRequest") return;
          asked.push(message.content_hash);
          if (!answers) return;
          const answer = await answerContentFetch(source, message.content_hash, 1 << 24);
          if (answer.type === "ContentFetchResponse" || answer.type === "ContentNotFound") {
            fetcher.onAnswer(answer);
          }
        },
      });
      // As a session's end does: detached first, then its requests fail.
      const end = () => {
        tier.detach(fetcher);
        fetcher.fail(new Error("connection closed"));
      };
      return { fetcher, asked, end };
    };
    const bytes = pseudoRandomBytes(300_000, 21);
    const { hash } = await source.putBytes(bytes);
    const first = connection(false);
    tier.attach(first.fetcher);
    const reading = target.readBytes(hash);
    await waitFor("the read asked on the first connection", () => first.asked.length === 1);
    assertEquals(first.asked, [hash]);
    first.end();
    const second = connection(true);
    tier.attach(second.fetcher);
    assertEquals(await reading, bytes);
    assert(
      second.asked.length > 0 && second.asked.every((key) => key.startsWith(`${hash}@`)),
      `asked in ranges on the next connection: ${second.asked.join(" ")}`,
    );
    // A read waiting for the next connection fails once the replica closes, and so does
    // every later one.
    const other = await source.putBytes(pseudoRandomBytes(5_000, 22));
    const third = connection(false);
    tier.attach(third.fetcher);
    const waiting = target.readBytes(other.hash);
    await waitFor("the read asked on the third connection", () => third.asked.length === 1);
    third.end();
    tier.close();
    await assertRejects(() => waiting, HeldByMasterError);
    tier.attach(second.fetcher);
    await assertRejects(() => target.readBytes(other.hash), HeldByMasterError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
