/**
 * Ranged fetches (docs/PROTOCOL.md §4, "What a connection must carry"): content whose
 * whole fetch a connection's end cut short is fetched in ranges by the connections after
 * it, each adding what it carried, until it is whole and verified. Fetcher and answers
 * are the real ones, over real Unix sockets, behind a responder that ends every
 * connection before it would send more than its budget.
 */
import { Cas, sha256Hex } from "../../lib/cas/mod.ts";
import { ContentFetcher } from "../../lib/replication/content_fetcher.ts";
import { parseRangeKey } from "../../lib/replication/content_range.ts";
import { PartialContents } from "../../lib/replication/partial_contents.ts";
import {
  answerContentFetch,
  connectUnix,
  listenUnix,
  TransportClosedError,
  type TransportServer,
} from "../../lib/replication/mod.ts";
import type { ContentFetchResponseMessage, WireMessage } from "../../lib/wire/mod.ts";
import { assert, assertEquals } from "./_assert.ts";
import { pseudoRandomBytes } from "./_harness.ts";

interface Link {
  source: Cas;
  target: Cas;
  partials: PartialContents;
  /** Every key asked for, over every connection. */
  requests: string[];
  /**
   * Runs `work` over connections, each ending once its answers would pass `budget`
   * bytes, until one lets it finish.
   *
   * @returns How many connections it took.
   */
  throughCuts(budget: number, work: (fetcher: ContentFetcher) => Promise<void>): Promise<number>;
}

interface LinkOptions {
  /** Changes (or replaces) the master's answer to a range key. */
  rangeAnswer?: (answer: WireMessage) => WireMessage;
}

async function withLink(work: (link: Link) => Promise<void>, options: LinkOptions = {}) {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-ranges-" });
  const source = await Cas.open(`${dir}/source`);
  const target = await Cas.open(`${dir}/target`);
  const partials = new PartialContents();
  const requests: string[] = [];
  let budget = Infinity;
  const server: TransportServer = await listenUnix({
    path: `${dir}/s.sock`,
    onTransport: async (transport) => {
      let sent = 0;
      try {
        for await (const message of transport.messages()) {
          if (message.type !== "ContentFetchRequest") continue;
          const key = message.content_hash;
          requests.push(key);
          let answer = await answerContentFetch(source, key, transport.maxPayload);
          if (parseRangeKey(key) && options.rangeAnswer) answer = options.rangeAnswer(answer);
          sent += answer.type === "ContentFetchResponse" ? answer.content.length + 100 : 100;
          if (sent > budget) break; // cut before the answer that would pass the budget
          await transport.send(answer);
        }
      } catch (error) {
        if (!cut(error)) throw error;
      } finally {
        transport.close();
      }
    },
  });
  const throughCuts = async (
    connectionBudget: number,
    work: (fetcher: ContentFetcher) => Promise<void>,
  ) => {
    budget = connectionBudget;
    for (let connections = 1; connections <= 500; connections++) {
      const client = await connectUnix(`${dir}/s.sock`);
      const fetcher = new ContentFetcher({ cas: target, send: (m) => client.send(m), partials });
      const reading = (async () => {
        try {
          for await (const message of client.messages()) {
            if (message.type === "ContentFetchResponse" || message.type === "ContentNotFound") {
              fetcher.onAnswer(message);
            }
          }
        } catch (error) {
          if (!cut(error)) throw error;
        } finally {
          fetcher.fail(new Error("connection closed"));
        }
      })();
      try {
        await work(fetcher);
        return connections;
      } catch (error) {
        if (!cut(error)) throw error;
      } finally {
        client.close();
        await reading;
      }
    }
    throw new Error("500 connections did not get the content through");
  };
  try {
    await work({ source, target, partials, requests, throughCuts });
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("content larger than any connection carries arrives in ranges, each connection adding to it", async () => {
  await withLink(async ({ source, target, partials, requests, throughCuts }) => {
    const bytes = pseudoRandomBytes(700_000, 1);
    const { hash } = await source.putBytes(bytes);
    const connections = await throughCuts(60_000, (fetcher) => fetcher.ensure(hash, bytes.length));
    assertEquals(await target.readBytes(hash), bytes);
    assertEquals(requests[0], hash, "asked for whole first");
    assert(connections >= 12, `${connections} connections carried 700 KB 60 KB at a time`);
    assert(connections <= 80, `${connections} connections: ranges did not adapt to the link`);
    const ranges = requests.slice(1).map((key) => parseRangeKey(key));
    assert(ranges.every((range) => range?.hash === hash), "then only in ranges");
    assertEquals(partials.sizeOf(hash), undefined, "forgotten once stored");
    assertEquals(partials.heldBytes, 0);
  });
});

Deno.test("a replica keeping no copy gets large content into memory in ranges, and chunks of chunked content too", async () => {
  await withLink(async ({ source, target, partials, requests, throughCuts }) => {
    const bytes = pseudoRandomBytes(300_000, 2);
    const { hash } = await source.putBytes(bytes);
    let held: Uint8Array | null = null;
    await throughCuts(100_000, async (fetcher) => {
      held = await fetcher.fetchBytes(hash, bytes.length);
    });
    assertEquals(held, bytes);
    assert(!(await target.has(hash)), "nothing stored");
    // Chunks (256 KiB to 4 MiB each) through connections of 1 MB.
    const large = pseudoRandomBytes(5 * 1024 * 1024, 3);
    const chunked = await source.putBytes(large);
    assert(chunked.chunked);
    requests.length = 0;
    await throughCuts(1_000_000, (fetcher) => fetcher.ensure(chunked.hash));
    assertEquals(sha256Hex(await target.readBytes(chunked.hash)), chunked.hash);
    assert(requests.some((key) => parseRangeKey(key) !== null), "some chunk came in ranges");
    assertEquals(partials.heldBytes, 0);
  });
});

Deno.test("a master that refuses ranges gets asked for the whole content again", async () => {
  await withLink(async ({ source, target, partials, requests, throughCuts }) => {
    const bytes = pseudoRandomBytes(200_000, 4);
    const { hash } = await source.putBytes(bytes);
    // Lost once by an earlier connection.
    partials.connectionEnded([{ hash, bytes: bytes.length, size: bytes.length }]);
    assertEquals(partials.sizeOf(hash), bytes.length);
    await throughCuts(Infinity, (fetcher) => fetcher.ensure(hash, bytes.length));
    assertEquals(await target.readBytes(hash), bytes);
    assert(parseRangeKey(requests[0]!) !== null, "a range asked for first");
    assertEquals(requests.at(-1), hash, "then the whole content");
    assertEquals(partials.sizeOf(hash), undefined);
  }, {
    rangeAnswer: (answer) =>
      answer.type === "ContentFetchResponse"
        ? { type: "ContentNotFound", content_hash: answer.content_hash }
        : answer,
  });
});

Deno.test("a range answered with the wrong size or too many bytes is corrupt: what was received is dropped and the content fetched whole", async () => {
  for (
    const [name, spoil] of [
      ["size", (answer) => ({ ...answer, size: 12n })],
      ["length", (answer) => ({ ...answer, content: new Uint8Array(2_000_000) })],
      ["bytes", (answer) => {
        const content = answer.content.slice();
        content[0]! ^= 0xff;
        return { ...answer, content };
      }],
    ] as [string, (answer: ContentFetchResponseMessage) => WireMessage][]
  ) {
    await withLink(async ({ source, target, partials, requests, throughCuts }) => {
      const bytes = pseudoRandomBytes(200_000, 5);
      const { hash } = await source.putBytes(bytes);
      partials.connectionEnded([{ hash, bytes: bytes.length, size: bytes.length }]);
      await throughCuts(Infinity, (fetcher) => fetcher.ensure(hash, bytes.length));
      assertEquals(await target.readBytes(hash), bytes, name);
      assert(parseRangeKey(requests[0]!) !== null, `${name}: asked in ranges first`);
      assertEquals(requests.at(-1), hash, `${name}: fetched whole in the end`);
      assertEquals(requests.filter((key) => key === hash).length, 1, `${name}: whole once`);
      assertEquals(partials.sizeOf(hash), undefined, name);
      assertEquals(partials.heldBytes, 0, name);
    }, {
      rangeAnswer: (answer) => answer.type === "ContentFetchResponse" ? spoil(answer) : answer,
    });
  }
});

/** Whether `error` says the connection went (a send to it, or its end failing a request). */
function cut(error: unknown): boolean {
  return error instanceof TransportClosedError || error instanceof Deno.errors.BrokenPipe ||
    error instanceof Deno.errors.ConnectionReset ||
    (error instanceof Error && error.message === "connection closed");
}

Deno.test("chunks of the largest size (a file of zeros) come in ranges too, and concurrent fetches of one content share its ranges", async () => {
  await withLink(async ({ source, target, partials, requests, throughCuts }) => {
    const zeros = new Uint8Array(10 * 1024 * 1024);
    const { hash, chunked } = await source.putBytes(zeros);
    assert(chunked);
    const chunks = (await source.manifest(hash))!.chunks;
    assert(chunks.some((chunk) => chunk.size === 4 * 1024 * 1024), "a chunk of 4 MiB");
    await throughCuts(1_000_000, (fetcher) => fetcher.ensure(hash));
    assertEquals(sha256Hex(await target.readBytes(hash)), hash);
    const rangedChunks = new Set(requests.map((key) => parseRangeKey(key)?.hash));
    assert(rangedChunks.has(chunks[0]!.hash), "the 4 MiB chunk came in ranges");
    // Two callers of one content over a connection that carries it in ranges: one set.
    const bytes = pseudoRandomBytes(300_000, 6);
    const other = await source.putBytes(bytes);
    partials.connectionEnded([{ hash: other.hash, bytes: bytes.length, size: bytes.length }]);
    requests.length = 0;
    let held: Uint8Array | null = null;
    await throughCuts(Infinity, async (fetcher) => {
      [held] = await Promise.all([
        fetcher.fetchBytes(other.hash, bytes.length),
        fetcher.ensure(other.hash, bytes.length),
      ]);
    });
    assertEquals(held, bytes);
    assertEquals(await target.readBytes(other.hash), bytes);
    assert(!requests.includes(other.hash), "never asked for whole");
    assertEquals(new Set(requests).size, requests.length, "no range asked for twice");
    assertEquals(partials.heldBytes, 0);
  });
});

Deno.test("a fetch that does not know its content's size (a release's) goes on in ranges too, learning the size from the first", async () => {
  await withLink(async ({ source, target, partials, requests, throughCuts }) => {
    const bytes = pseudoRandomBytes(200_000, 7);
    const { hash } = await source.putBytes(bytes);
    const connections = await throughCuts(60_000, (fetcher) => fetcher.need(hash));
    assertEquals(await target.readBytes(hash), bytes);
    assertEquals(requests[0], hash, "asked for whole first");
    assert(requests.slice(1).every((key) => parseRangeKey(key)?.hash === hash), "then in ranges");
    assert(connections <= 60, `${connections} connections for 200 KB`);
    assertEquals(partials.sizeOf(hash), undefined);
    // A chunked content of unknown size: its range is refused, and its manifest fetched.
    const large = await source.putBytes(pseudoRandomBytes(5 * 1024 * 1024, 8));
    partials.connectionEnded([{ hash: large.hash, bytes: 4 * 1024 * 1024 }]);
    requests.length = 0;
    await throughCuts(Infinity, (fetcher) => fetcher.need(large.hash));
    assertEquals(sha256Hex(await target.readBytes(large.hash)), large.hash);
    assertEquals(parseRangeKey(requests[0]!)?.hash, large.hash, "a range asked for first");
    assertEquals(requests[1], large.hash, "then the whole (its manifest)");
  });
});
