-- Claim check: tool outputs too large to travel through workflow history are stored here and
-- referenced by (agent, tool call); history carries a short preview.
CREATE TABLE tool_outputs (
    agent_id     uuid        NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    tool_call_id text        NOT NULL,
    content      text        NOT NULL,
    size_bytes   integer     NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, tool_call_id)
);

---- create above / drop below ----

DROP TABLE tool_outputs;
