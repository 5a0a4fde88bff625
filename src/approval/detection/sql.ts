/**
 * SQL statement classes, for statements given to a database client. Strings
 * and comments are blanked first, so `WHERE` inside a string literal does not
 * count and `DROP` inside a comment does not either. Client meta-commands that
 * run a shell command (`\!`, `.system`, `.shell`) are returned for scanning.
 */

export interface SqlAnalysis {
  findings: string[];
  /** Shell command lines from `\! …` (psql, mysql), `.system …` / `.shell …` (sqlite3), `system …` (mysql). */
  shellCommands: string[];
}

function blank(sql: string): string {
  let out = "";
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const ch = sql[i]!;
    const next = sql[i + 1];
    if (ch === "-" && next === "-") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? n : end;
      continue;
    }
    if (ch === "#" && (i === 0 || /\s/.test(sql[i - 1]!))) {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? n : end;
      continue;
    }
    if (ch === "/" && next === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
      out += " ";
      continue;
    }
    if (ch === "'") {
      let j = i + 1;
      while (j < n) {
        if (sql[j] === "\\") j += 2;
        else if (sql[j] === "'" && sql[j + 1] === "'") j += 2;
        else if (sql[j] === "'") break;
        else j++;
      }
      out += "''";
      i = j + 1;
      continue;
    }
    if (ch === "$") {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64));
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        out += "''";
        i = end < 0 ? n : end + tag[0].length;
        continue;
      }
    }
    out += ch;
    i++;
  }
  return out;
}

const TRIVIAL_WHERE = /\bWHERE\s+(?:\(?\s*(?:1\s*=\s*1|'([^']*)'\s*=\s*'\1'|TRUE|1|NOT\s+FALSE|\d+\s*>\s*0)\s*\)?)\s*(?:;|$|\bRETURNING\b|\bLIMIT\b|\bORDER\b)/i;

function classify(statement: string, findings: Set<string>): void {
  let s = statement.trim().replace(/\s+/g, " ");
  if (s === "") return;
  // `WITH … AS (…) DELETE …`: look at the statement after the CTEs.
  if (/^WITH\b/i.test(s)) {
    const m = /\)\s*(DELETE|UPDATE|INSERT|SELECT|MERGE)\b/i.exec(s);
    if (m) s = s.slice(m.index + 1).trim();
  }
  const upper = s.toUpperCase();
  if (/^DROP\s/.test(upper) || /^ALTER\s+TABLE\b.*\bDROP\b/.test(upper)) findings.add("sql-drop");
  if (/^TRUNCATE\b/.test(upper)) findings.add("sql-truncate");
  if (/^DELETE\b/.test(upper) && (!/\bWHERE\b/.test(upper) || TRIVIAL_WHERE.test(s))) findings.add("sql-delete-without-where");
  if (/^UPDATE\b/.test(upper) && /\bSET\b/.test(upper) && (!/\bWHERE\b/.test(upper) || TRIVIAL_WHERE.test(s))) findings.add("sql-update-without-where");
}

/** Splits statements on `;` outside strings and comments and classifies each one. */
export function analyseSql(sql: string): SqlAnalysis {
  const findings = new Set<string>();
  const shellCommands: string[] = [];
  const lines: string[] = [];
  for (const line of sql.split("\n")) {
    const meta = /^\s*(?:\\!|\.system\b|\.shell\b|system\b)\s*(.*)$/i.exec(line);
    if (meta) {
      findings.add("sql-shell-escape");
      if (meta[1]) shellCommands.push(meta[1]);
      continue;
    }
    // Other psql meta-commands and sqlite dot-commands are not SQL.
    if (/^\s*(?:\\[a-zA-Z?]|\.[a-z])/.test(line)) continue;
    lines.push(line);
  }
  for (const statement of blank(lines.join("\n")).split(";")) classify(statement, findings);
  return { findings: [...findings], shellCommands };
}

/** MongoDB shell payloads (`mongosh --eval`): whole-database and whole-collection wipes. */
export function analyseMongo(code: string): SqlAnalysis {
  const findings: string[] = [];
  if (/\.dropDatabase\s*\(|\.drop\s*\(\s*\)|\.(?:deleteMany|remove)\s*\(\s*\{\s*\}\s*\)|\.dropCollection\s*\(/.test(code)) findings.push("nosql-wipe");
  return { findings, shellCommands: [] };
}
