-- Team memory: the head of every memory, and every version of it (tombstones included).
CREATE TABLE memory (
  namespace text NOT NULL,
  path text NOT NULL,
  content text NOT NULL,
  content_sha256 text NOT NULL,
  version integer NOT NULL,
  size integer NOT NULL,
  -- The catalog entry (frontmatter summary and search terms), derived from the content by the writer.
  entry jsonb NOT NULL,
  author text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, path)
);

CREATE TABLE memory_version (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The writing transaction: watchers deliver in (xact_id, id) order below the oldest running transaction.
  xact_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  namespace text NOT NULL,
  path text NOT NULL,
  version integer NOT NULL,
  op text NOT NULL CHECK (op IN ('write', 'delete', 'rename-from', 'rename-to')),
  content text NOT NULL,
  content_sha256 text,
  actor text NOT NULL,
  author text NOT NULL,
  reason text,
  other_path text,
  write_id text UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  redacted_at timestamptz,
  UNIQUE (namespace, path, version)
);

CREATE INDEX memory_version_feed ON memory_version (namespace, xact_id, id);

-- The hand-written top of MEMORY.md; the rest of the index is generated from the memories.
CREATE TABLE memory_index (
  namespace text PRIMARY KEY,
  preamble text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now()
);

-- Reviewable changes (extraction, dream) waiting for a person.
CREATE TABLE memory_proposal (
  namespace text NOT NULL,
  id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  author text NOT NULL,
  summary text NOT NULL,
  changes jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
  decided_at timestamptz,
  PRIMARY KEY (namespace, id)
);

-- The dream's state, its lease and its reports.
CREATE TABLE memory_dream (
  namespace text PRIMARY KEY,
  last_run_at timestamptz,
  sessions jsonb NOT NULL DEFAULT '[]',
  lock_holder text,
  lock_until timestamptz
);

CREATE TABLE memory_dream_report (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  namespace text NOT NULL,
  ran_at timestamptz NOT NULL,
  markdown text NOT NULL
);
