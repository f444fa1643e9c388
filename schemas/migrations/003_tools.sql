-- The agentic loop: structured message parts, per-user tool policies, the agent's notes (the
-- built-in tools' data) and the action log of every tool call.
ALTER TABLE messages
    ADD COLUMN parts        jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN tool_call_id text  NOT NULL DEFAULT '';

CREATE TABLE tool_policies (
    workspace_id uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      text        NOT NULL,
    policy       text        NOT NULL CHECK (policy IN ('ask_every_time', 'run_reads_only', 'run_everything')),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, user_id)
);

CREATE TABLE agent_notes (
    id         uuid PRIMARY KEY,
    agent_id   uuid        NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    title      text        NOT NULL,
    body       text        NOT NULL,
    draft      boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_notes_agent_idx ON agent_notes (agent_id, created_at DESC);

CREATE TABLE tool_actions (
    id             uuid PRIMARY KEY,
    agent_id       uuid        NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    workspace_id   uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id        text        NOT NULL,
    tool_call_id   text        NOT NULL,
    tool           text        NOT NULL,
    input          text        NOT NULL,
    output_summary text        NOT NULL,
    duration_ms    integer     NOT NULL,
    success        boolean     NOT NULL,
    error          text        NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (agent_id, tool_call_id)
);
CREATE INDEX tool_actions_workspace_idx ON tool_actions (workspace_id, created_at DESC, id);
CREATE INDEX tool_actions_agent_idx ON tool_actions (agent_id, created_at DESC, id);

---- create above / drop below ----

DROP TABLE tool_actions;
DROP TABLE agent_notes;
DROP TABLE tool_policies;
ALTER TABLE messages DROP COLUMN tool_call_id, DROP COLUMN parts;
