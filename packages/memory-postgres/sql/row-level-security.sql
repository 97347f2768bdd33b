-- Optional row-level security for team memory: each database role sees and writes only the namespaces
-- granted to it in memory_namespace_grant, whatever namespaces a client claims. Run it once, as the owner
-- of the tables, after the migrations; then grant roles their namespaces:
--   INSERT INTO memory_namespace_grant (role_name, namespace) VALUES ('agents_web', 'team/web/project/shop');
-- The table owner is not subject to these policies; connect the agents as other roles.
CREATE TABLE IF NOT EXISTS memory_namespace_grant (
  role_name name NOT NULL,
  namespace text NOT NULL,
  PRIMARY KEY (role_name, namespace)
);

GRANT SELECT ON memory_namespace_grant TO PUBLIC;

DO $$
DECLARE
  item text;
BEGIN
  FOREACH item IN ARRAY ARRAY['memory', 'memory_version', 'memory_index', 'memory_proposal', 'memory_dream', 'memory_dream_report'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', item);
    EXECUTE format('DROP POLICY IF EXISTS memory_namespace_grant ON %I', item);
    EXECUTE format(
      'CREATE POLICY memory_namespace_grant ON %I USING (namespace IN (SELECT g.namespace FROM memory_namespace_grant g WHERE g.role_name = current_user)) WITH CHECK (namespace IN (SELECT g.namespace FROM memory_namespace_grant g WHERE g.role_name = current_user))',
      item
    );
  END LOOP;
END
$$;
