import assert from "node:assert/strict";
import { nextTurn } from "../../lib/concurrency/mod.ts";

Deno.test("nextTurn() lets due timers and ready sockets run between the steps of a loop", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    let timerFired = false;
    let accepted: Deno.Conn | null = null;
    setTimeout(() => timerFired = true, 5);
    const accepting = listener.accept().then((conn) => accepted = conn);
    const client = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
    try {
      // A loop that only ever yields through nextTurn: starved timers or sockets would keep
      // it going until the deadline.
      const deadline = Date.now() + 10_000;
      let turns = 0;
      while ((!timerFired || accepted === null) && Date.now() < deadline) {
        await nextTurn();
        turns++;
      }
      assert.ok(timerFired, `the timer never fired in ${turns} turns`);
      assert.ok(accepted, `the connection was never accepted in ${turns} turns`);
    } finally {
      client.close();
      (await accepting).close();
    }
  } finally {
    listener.close();
  }
});
