-- Four eyes that the requester cannot skip (issue 18): a workspace maximum bounds every member's
-- tool policy, and every change of a workspace's settings and members is recorded (who, what,
-- before, after) in the same transaction as the change, for its admins to read.
ALTER TABLE workspaces
    ADD COLUMN max_tool_policy text NOT NULL DEFAULT 'run_everything'
        CHECK (max_tool_policy IN ('ask_every_time', 'run_reads_only', 'run_everything'));

CREATE TABLE workspace_audit_log (
    id           uuid PRIMARY KEY,
    workspace_id uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    actor        text        NOT NULL, -- who made the change
    action       text        NOT NULL, -- workspace.update, workspace.settings, member.add, member.role, member.tool_policy, …
    subject      text        NOT NULL DEFAULT '', -- the member a member change concerns
    before       jsonb       NOT NULL,
    after        jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX workspace_audit_log_idx ON workspace_audit_log (workspace_id, created_at DESC, id DESC);

---- create above / drop below ----

DROP TABLE workspace_audit_log;
ALTER TABLE workspaces DROP COLUMN max_tool_policy;
