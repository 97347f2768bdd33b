-- Task state for @unforget/tasks-postgres. PostgreSQL 15 and PGlite. pg-boss keeps its own schema (pgboss).

-- One row per task. `record` is the task's record (status, owner, pending notifications, ...) as the tasks
-- package defines it; the other columns are copies of it for queries, and the queue's bookkeeping.
CREATE TABLE unforget_task (
  id text PRIMARY KEY,
  version integer NOT NULL,
  record jsonb NOT NULL,
  spec jsonb,
  queue text,
  job_id uuid,
  status text NOT NULL,
  session_id text,
  attempt integer NOT NULL DEFAULT 0,
  worker_id text,
  lease_until timestamptz,
  created_at bigint NOT NULL,
  -- The id of the last update: a retried transaction whose COMMIT did go through recognises its own write.
  last_write uuid
);
CREATE INDEX unforget_task_order ON unforget_task (created_at, id);
CREATE INDEX unforget_task_leases ON unforget_task (lease_until) WHERE status = 'running' AND worker_id IS NOT NULL;
CREATE INDEX unforget_task_worker ON unforget_task (worker_id) WHERE status = 'running';
CREATE INDEX unforget_task_waiting ON unforget_task (session_id) WHERE status = 'running' AND worker_id IS NULL;

-- Output in chunks of at most 256 KiB, per attempt; only committed rows are visible to readers.
CREATE TABLE unforget_task_output (
  task_id text NOT NULL REFERENCES unforget_task (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  byte_offset bigint NOT NULL,
  bytes bytea NOT NULL,
  committed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, attempt, byte_offset)
);

-- Every notification, committed with the state change that raised it. xact_id orders commits: a reader
-- takes only rows below pg_snapshot_xmin(pg_current_snapshot()), which no running transaction can precede.
CREATE TABLE unforget_task_event (
  id bigserial PRIMARY KEY,
  xact_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  task_id text NOT NULL,
  session_id text,
  kind text NOT NULL,
  payload jsonb NOT NULL
);
CREATE INDEX unforget_task_event_session ON unforget_task_event (session_id, id);

-- Stop and stdin for a task's owner, answered once.
CREATE TABLE unforget_task_command (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  task_id text NOT NULL,
  command jsonb NOT NULL,
  result jsonb
);
CREATE INDEX unforget_task_command_pending ON unforget_task_command (task_id, seq) WHERE result IS NULL;

-- Owners (workers and managers) and their heartbeats: a lease lasts lease_ms after heartbeat_at.
CREATE TABLE unforget_task_owner (
  id text PRIMARY KEY,
  hostname text NOT NULL,
  pid integer NOT NULL,
  start_time text NOT NULL,
  types text[] NOT NULL DEFAULT '{}',
  heartbeat_at timestamptz NOT NULL
);

-- The durable mailbox: a receiver deletes what it takes, so each message is taken once.
CREATE TABLE unforget_task_message (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  address text NOT NULL,
  message jsonb NOT NULL
);
CREATE INDEX unforget_task_message_address ON unforget_task_message (address, seq);
