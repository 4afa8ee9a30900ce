import assert from "node:assert/strict";
import { HashPrefixSet, sha256Hex } from "../../lib/cas/mod.ts";

const hashOf = (n: number) => sha256Hex(new TextEncoder().encode(`content ${n}`));

Deno.test("HashPrefixSet holds every hash added, across growth and adds after a look", () => {
  const set = new HashPrefixSet();
  const added: string[] = [];
  // Looks between adds: what was added after a look is sorted in at the next one.
  for (let n = 0; n < 5_000; n++) {
    const hash = hashOf(n);
    set.add(hash);
    added.push(hash);
    if (n % 997 === 0) assert.equal(set.has(hash), true);
  }
  for (const hash of added) assert.equal(set.has(hash), true, hash);
  for (let n = 5_000; n < 10_000; n++) assert.equal(set.has(hashOf(n)), false);
  assert.equal(set.size, 5_000);
});

Deno.test("HashPrefixSet counts a hash added twice once and ignores what is no hash", () => {
  const hash = hashOf(1);
  const cases: Array<{ adds: string[]; size: number; has: Record<string, boolean> }> = [
    { adds: [], size: 0, has: { [hash]: false, "": false } },
    { adds: [hash, hash], size: 1, has: { [hash]: true } },
    // Not content hashes: no stored object is named so, so they keep nothing.
    { adds: ["", "not a hash", hash.toUpperCase(), hash.slice(1)], size: 0, has: { "": false } },
    { adds: [hash, ""], size: 1, has: { [hash]: true, [hash.toUpperCase()]: false } },
  ];
  for (const { adds, size, has } of cases) {
    const set = new HashPrefixSet();
    for (const value of adds) set.add(value);
    assert.equal(set.size, size, JSON.stringify(adds));
    for (const [value, expected] of Object.entries(has)) {
      assert.equal(set.has(value), expected, `${JSON.stringify(adds)} has ${value}`);
    }
  }
});

Deno.test("HashPrefixSet tells hashes apart by their first 52 bits only", () => {
  const hash = hashOf(2);
  const set = new HashPrefixSet().add(hash);
  // The last bit of the prefix tells them apart; a difference after it does not (a wrong
  // "yes", which only keeps an object a sweep could have removed).
  const flip = (at: number) =>
    hash.slice(0, at) + (hash[at] === "0" ? "1" : "0") + hash.slice(at + 1);
  assert.equal(set.has(flip(12)), false);
  assert.equal(set.has(flip(13)), true);
  assert.equal(set.has(flip(63)), true);
});
