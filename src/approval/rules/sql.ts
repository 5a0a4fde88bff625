/**
 * Destructive database statements. The statements come from a client's
 * options (`psql -c`, `mysql -e`), its operands (`sqlite3 db "…"`), a heredoc
 * or here-string, or a pipe of static text; the engine splits them and reports
 * one finding per statement class (detection/sql.ts).
 */
import type { Rule } from "./types.js";

/** Rails/rake tasks that drop or empty the database. */
const DB_RESET_TASK = /^db:(?:drop|reset|purge|schema:load|structure:load|truncate_all|migrate:reset|setup|seed:replant)(?::[\w:]+)?$/;
/** Laravel artisan commands that drop every table. */
const ARTISAN_RESET = /^(?:migrate:(?:fresh|reset|refresh)|db:wipe)$/;
/** Django management commands that empty the database. */
const DJANGO_RESET = ["flush", "reset_db", "reset_schema"];

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
  {
    id: "framework-db-reset",
    description: "Drops or resets an application's database through its framework (prisma migrate reset, rails db:drop, artisan migrate:fresh, manage.py flush).",
    category: "data_deletion",
    hardline: false,
    match: [
      { kind: "command", programs: ["prisma"], operands: [{ which: 0, equals: ["migrate"] }, { which: 1, equals: ["reset"] }] },
      { kind: "command", programs: ["prisma"], operands: [{ which: 0, equals: ["db"] }, { which: 1, equals: ["push"] }], anyOptions: ["--force-reset", "--accept-data-loss"] },
      { kind: "command", programs: ["rails", "rake"], operands: [{ pattern: DB_RESET_TASK }] },
      { kind: "command", programs: ["php"], operands: [{ which: 0, pattern: /(?:^|\/)artisan$/ }, { which: 1, pattern: ARTISAN_RESET }] },
      { kind: "command", programs: ["artisan"], operands: [{ which: 0, pattern: ARTISAN_RESET }] },
      { kind: "command", programs: ["python"], operands: [{ which: 0, pattern: /(?:^|\/)manage\.py$/ }, { which: 1, equals: DJANGO_RESET }] },
      { kind: "command", programs: ["manage.py", "django-admin"], operands: [{ which: 0, equals: DJANGO_RESET }] },
      { kind: "command", programs: ["sequelize", "sequelize-cli"], operands: [{ which: 0, equals: ["db:drop", "db:migrate:undo:all"] }] },
      { kind: "command", programs: ["typeorm", "typeorm-ts-node-commonjs", "typeorm-ts-node-esm"], operands: [{ which: 0, equals: ["schema:drop"] }] },
      { kind: "command", programs: ["drizzle-kit"], operands: [{ which: 0, equals: ["drop"] }] },
      { kind: "command", programs: ["mix"], operands: [{ which: 0, equals: ["ecto.drop", "ecto.reset", "ecto.rollback"] }], noOptions: ["--help"] },
      { kind: "command", programs: ["knex"], operands: [{ which: 0, equals: ["migrate:rollback"] }], anyOptions: ["--all"] },
      { kind: "command", programs: ["alembic", "flask"], operands: [{ equals: ["downgrade"] }, { which: "last", equals: ["base"] }] },
      { kind: "command", programs: ["dotnet"], operands: [{ which: 0, equals: ["ef"] }, { which: 1, equals: ["database"] }, { which: 2, equals: ["drop"] }] },
      { kind: "command", programs: ["supabase"], operands: [{ which: 0, equals: ["db"] }, { which: 1, equals: ["reset"] }] },
      { kind: "command", programs: ["heroku"], operands: [{ which: 0, equals: ["pg:reset"] }] },
    ],
  },
  {
    id: "http-delete",
    description: "Sends an HTTP DELETE request, which deletes what the URL names (a record, an index, a repository).",
    category: "data_deletion",
    hardline: false,
    match: [
      { kind: "command", programs: ["curl", "curlie"], optionValues: [{ option: "-X", pattern: /^delete$/i }] },
      { kind: "command", programs: ["wget", "wget2"], optionValues: [{ option: "--method", pattern: /^delete$/i }] },
      { kind: "command", programs: ["http", "https", "xh", "xhs", "httpie"], operands: [{ which: 0, pattern: /^delete$/i }] },
      { kind: "command", programs: ["gh"], operands: [{ which: 0, equals: ["api"] }, { pattern: /^delete$/i }] },
    ],
  },
];
