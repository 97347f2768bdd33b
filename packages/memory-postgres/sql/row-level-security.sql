-- Optional row-level security for team memory: each database role reads only the namespaces granted to it
-- in memory_namespace_grant, and writes only those granted with access 'write', whatever namespaces a client
-- claims. Three kinds of role:
--   owner   owns the tables: runs the migrations and this script, and is the only one who grants namespaces:
--             INSERT INTO memory_namespace_grant (role_name, namespace, access)
--             VALUES ('agents_web', 'team/web/project/shop', 'write');
--   writer  the agents: SELECT, INSERT, UPDATE, DELETE on the memory tables, and 'write' grants;
--   reader  SELECT on the memory tables, and 'read' grants.
-- Neither a writer nor a reader can change who sees what, even with every privilege on every table of the
-- schema: the grants table has row-level security too, and no policy lets anyone but its owner change it.
-- The owner is not subject to these policies; connect the agents as other roles. Run it again after an
-- upgrade: it is idempotent.
CREATE TABLE IF NOT EXISTS memory_namespace_grant (
  role_name name NOT NULL,
  namespace text NOT NULL,
  PRIMARY KEY (role_name, namespace)
);
-- Grants made before roles were told apart were for reading and writing.
ALTER TABLE memory_namespace_grant
  ADD COLUMN IF NOT EXISTS access text NOT NULL DEFAULT 'write' CHECK (access IN ('read', 'write'));

-- The policies below read it as the role that queries: each role sees its own rows, and changes none.
REVOKE ALL ON memory_namespace_grant FROM PUBLIC;
GRANT SELECT ON memory_namespace_grant TO PUBLIC;
ALTER TABLE memory_namespace_grant ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS memory_namespace_grant_own ON memory_namespace_grant;
CREATE POLICY memory_namespace_grant_own ON memory_namespace_grant FOR SELECT USING (role_name = current_user);

DO $$
DECLARE
  item text;
  readable constant text := 'namespace IN (SELECT g.namespace FROM memory_namespace_grant g WHERE g.role_name = current_user)';
  writable constant text := 'namespace IN (SELECT g.namespace FROM memory_namespace_grant g WHERE g.role_name = current_user AND g.access = ''write'')';
BEGIN
  FOREACH item IN ARRAY ARRAY['memory', 'memory_version', 'memory_index', 'memory_proposal', 'memory_dream', 'memory_dream_report'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', item);
    -- The single policy of earlier versions let every granted role write.
    EXECUTE format('DROP POLICY IF EXISTS memory_namespace_grant ON %I', item);
    EXECUTE format('DROP POLICY IF EXISTS memory_namespace_read ON %I', item);
    EXECUTE format('DROP POLICY IF EXISTS memory_namespace_insert ON %I', item);
    EXECUTE format('DROP POLICY IF EXISTS memory_namespace_update ON %I', item);
    EXECUTE format('DROP POLICY IF EXISTS memory_namespace_delete ON %I', item);
    EXECUTE format('CREATE POLICY memory_namespace_read ON %I FOR SELECT USING (%s)', item, readable);
    EXECUTE format('CREATE POLICY memory_namespace_insert ON %I FOR INSERT WITH CHECK (%s)', item, writable);
    EXECUTE format('CREATE POLICY memory_namespace_update ON %I FOR UPDATE USING (%s) WITH CHECK (%s)', item, writable, writable);
    EXECUTE format('CREATE POLICY memory_namespace_delete ON %I FOR DELETE USING (%s)', item, writable);
  END LOOP;
END
$$;
