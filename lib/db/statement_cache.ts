import type { DatabaseSync, StatementSync } from "node:sqlite";

/**
 * Prepares each SQL text once per connection and reuses it: preparing is most of the cost
 * of a small query.
 *
 * @returns A function from SQL text to its prepared statement.
 */
export function statementCache(db: DatabaseSync): (sql: string) => StatementSync {
  const statements = new Map<string, StatementSync>();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
}
