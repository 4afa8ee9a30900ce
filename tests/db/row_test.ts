import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { columns, DatabaseError } from "../../lib/db/mod.ts";

Deno.test("columns() reads each type it is asked for and refuses any other", async (t) => {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (name TEXT, n INTEGER, x REAL, flag INTEGER, data BLOB)");
  db.prepare("INSERT INTO t VALUES ('a', 3, 1.5, 1, x'0102')").run();
  db.prepare("INSERT INTO t VALUES (NULL, NULL, NULL, 2, NULL)").run();
  const [full, empty] = db.prepare("SELECT * FROM t").all().map(columns);
  db.close();
  const table: {
    description: string;
    read: () => unknown;
    expected: unknown;
  }[] = [
    { description: "text", read: () => full!.text("name"), expected: "a" },
    { description: "integer", read: () => full!.integer("n"), expected: 3 },
    { description: "a real as a number", read: () => full!.number("x"), expected: 1.5 },
    { description: "an integer as a number", read: () => full!.number("n"), expected: 3 },
    { description: "a flag", read: () => full!.boolean("flag"), expected: true },
    { description: "bytes", read: () => [...full!.bytes("data")], expected: [1, 2] },
    { description: "NULL text allowed", read: () => empty!.textOrNull("name"), expected: null },
    { description: "NULL integer allowed", read: () => empty!.integerOrNull("n"), expected: null },
    { description: "NULL text refused", read: () => empty!.text("name"), expected: /is NULL/ },
    { description: "NULL integer refused", read: () => empty!.integer("n"), expected: /is NULL/ },
    { description: "text as integer", read: () => full!.integer("name"), expected: /"name"/ },
    { description: "integer as text", read: () => full!.text("n"), expected: /"n" holds number/ },
    { description: "a real as integer", read: () => full!.integer("x"), expected: /an integer/ },
    { description: "a flag of 2", read: () => empty!.boolean("flag"), expected: /0 or 1/ },
    { description: "no such column", read: () => full!.text("nope"), expected: /no such column/ },
  ];
  for (const { description, read, expected } of table) {
    await t.step(description, () => {
      if (expected instanceof RegExp) {
        assert.throws(
          read,
          (error) => error instanceof DatabaseError && expected.test(error.message),
        );
      } else assert.deepEqual(read(), expected);
    });
  }
});
