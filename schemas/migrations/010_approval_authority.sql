-- Who may decide a tool call (issue 11): per workspace, whether its admins may decide calls
-- other members' messages led to, and four eyes (a write needs someone other than its requester
-- to approve it). The action log records who approved a call.
ALTER TABLE workspaces
    ADD COLUMN admins_may_approve boolean NOT NULL DEFAULT false,
    ADD COLUMN four_eyes          boolean NOT NULL DEFAULT false;
ALTER TABLE tool_actions ADD COLUMN decided_by text NOT NULL DEFAULT '';

---- create above / drop below ----

ALTER TABLE tool_actions DROP COLUMN decided_by;
ALTER TABLE workspaces DROP COLUMN four_eyes, DROP COLUMN admins_may_approve;
