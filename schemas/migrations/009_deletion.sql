-- A workspace or org being deleted is hidden at once (deleting_at set); the deletion workflow
-- removes its conversations, events and file bytes, then the rows.
ALTER TABLE orgs ADD COLUMN deleting_at timestamptz;
ALTER TABLE workspaces ADD COLUMN deleting_at timestamptz;

---- create above / drop below ----

ALTER TABLE workspaces DROP COLUMN deleting_at;
ALTER TABLE orgs DROP COLUMN deleting_at;
