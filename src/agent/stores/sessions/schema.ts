/**
 * The session store's schema as a list of migrations. `PRAGMA user_version` is the number of
 * migrations applied; opening a store applies the missing ones in one write transaction (another
 * process opening the same file at the same time waits, then finds them applied). A file whose
 * version is above `SCHEMA_VERSION` was written by a newer build and is refused, never downgraded.
 *
 * Messages are stored once: both full-text indexes are external-content FTS5 tables over the
 * generated column `search_text` (content, tool name and tool calls), kept in step by triggers.
 * Synthetic messages (compaction summaries, re-injected todo lists) are not indexed; the trigram
 * index holds only messages with CJK/Thai text (column `unspaced`).
 */

/** Migration `i` takes a store from version `i` to `i + 1`. Never edit a released entry: append one. */
export const MIGRATIONS: readonly string[] = [
  // 1: sessions, messages, the word index and the trigram index (CJK).
  `
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    model TEXT,
    title TEXT,
    parent_session_id TEXT,
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    ended_at INTEGER,
    end_reason TEXT,
    message_count INTEGER NOT NULL DEFAULT 0,
    tool_call_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  CREATE INDEX sessions_updated ON sessions(updated_at);
  CREATE INDEX sessions_parent ON sessions(parent_session_id);
  CREATE INDEX sessions_title ON sessions(title) WHERE title IS NOT NULL;

  CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    content_parts TEXT,
    tool_calls TEXT,
    tool_call_id TEXT,
    tool_name TEXT,
    reasoning TEXT,
    finish_reason TEXT,
    token_count INTEGER,
    synthetic TEXT,
    unspaced INTEGER NOT NULL DEFAULT 0,
    timestamp INTEGER NOT NULL,
    search_text TEXT GENERATED ALWAYS AS (
      coalesce(content, '') || ' ' || coalesce(tool_name, '') || ' ' || coalesce(tool_calls, '')
    ) VIRTUAL
  ) STRICT;
  CREATE INDEX messages_session ON messages(session_id, id);

  CREATE VIRTUAL TABLE messages_fts USING fts5(search_text, content='messages', content_rowid='id');
  CREATE VIRTUAL TABLE messages_trigram USING fts5(search_text, content='messages', content_rowid='id', tokenize='trigram');

  -- The trigram index holds only messages with text in scripts written without spaces (unspaced = 1,
  -- set by the store): it serves only queries with such text, and on other text it would cost
  -- several times the word index's insert time for nothing.
  CREATE TRIGGER messages_index AFTER INSERT ON messages WHEN new.synthetic IS NULL BEGIN
    INSERT INTO messages_fts(rowid, search_text) VALUES (new.id, new.search_text);
  END;
  CREATE TRIGGER messages_index_trigram AFTER INSERT ON messages WHEN new.synthetic IS NULL AND new.unspaced = 1 BEGIN
    INSERT INTO messages_trigram(rowid, search_text) VALUES (new.id, new.search_text);
  END;
  CREATE TRIGGER messages_unindex AFTER DELETE ON messages WHEN old.synthetic IS NULL BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
  END;
  CREATE TRIGGER messages_unindex_trigram AFTER DELETE ON messages WHEN old.synthetic IS NULL AND old.unspaced = 1 BEGIN
    INSERT INTO messages_trigram(messages_trigram, rowid, search_text) VALUES ('delete', old.id, old.search_text);
  END;
  -- Messages are append-only: an edit would leave the external-content indexes describing old text.
  CREATE TRIGGER messages_append_only BEFORE UPDATE ON messages BEGIN
    SELECT RAISE(ABORT, 'messages are append-only');
  END;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;
