-- Conversations (agents) and their transcript. The conversation workflow is the single writer of
-- an agent's messages; it assigns each message its seq, so (agent_id, seq) is unique and ordered.
CREATE TABLE agents (
    id           uuid PRIMARY KEY,
    workspace_id uuid        NOT NULL,
    name         text        NOT NULL DEFAULT '' CHECK (length(name) <= 200),
    title        text        NOT NULL DEFAULT '',
    model        text        NOT NULL DEFAULT '',
    status       text        NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'active', 'waiting')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agents_workspace_created_idx ON agents (workspace_id, created_at DESC, id);

CREATE TABLE messages (
    id                uuid PRIMARY KEY,
    agent_id          uuid        NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    seq               bigint      NOT NULL CHECK (seq > 0),
    role              text        NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
    content           text        NOT NULL,
    status            text        NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'stopped', 'error')),
    model             text        NOT NULL DEFAULT '',
    prompt_tokens     integer     NOT NULL DEFAULT 0,
    completion_tokens integer     NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (agent_id, seq)
);

---- create above / drop below ----

DROP TABLE messages;
DROP TABLE agents;
