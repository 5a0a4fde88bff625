/**
 * Destructive database statements. The statements come from a client's
 * options (`psql -c`, `mysql -e`), its operands (`sqlite3 db "…"`), a heredoc
 * or here-string, or a pipe of static text; the engine splits them and reports
 * one finding per statement class (detection/sql.ts).
 */
import type { Rule } from "./types.js";

export const SQL_RULES: readonly Rule[] = [
  {
    id: "sql-drop",
    description: "Drops a database object (DROP TABLE/DATABASE/SCHEMA/…, ALTER TABLE … DROP).",
    category: "sql_destruction",
    hardline: false,
    match: [
      { kind: "finding", finding: "sql-drop" },
      { kind: "command", programs: ["dropdb", "dropuser"], minOperands: 1 },
      { kind: "command", programs: ["mysqladmin"], operands: [{ equals: ["drop"] }] },
    ],
  },
  {
    id: "sql-truncate",
    description: "Empties a table (TRUNCATE).",
    category: "sql_destruction",
    hardline: false,
    match: { kind: "finding", finding: "sql-truncate" },
  },
  {
    id: "sql-delete-without-where",
    description: "Deletes every row of a table (DELETE without a WHERE clause, or with one that is always true).",
    category: "sql_destruction",
    hardline: false,
    match: { kind: "finding", finding: "sql-delete-without-where" },
  },
  {
    id: "sql-update-without-where",
    description: "Changes every row of a table (UPDATE without a WHERE clause, or with one that is always true).",
    category: "sql_destruction",
    hardline: false,
    match: { kind: "finding", finding: "sql-update-without-where" },
  },
  {
    id: "datastore-wipe",
    description: "Wipes a data store (Redis FLUSHALL/FLUSHDB, MongoDB dropDatabase/drop/deleteMany({})).",
    category: "sql_destruction",
    hardline: false,
    match: [
      { kind: "finding", finding: "nosql-wipe" },
      { kind: "command", programs: ["redis-cli", "valkey-cli", "keydb-cli"], operands: [{ pattern: /^flush(?:all|db)$/i }] },
    ],
  },
];
