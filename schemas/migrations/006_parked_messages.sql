-- Messages queued behind a running turn when the conversation workflow continues as new: the
-- next run's input carries their IDs only, and BeginTurn moves each into messages when its
-- turn starts (in the same transaction that deletes it here).
CREATE TABLE parked_messages (
    id         uuid PRIMARY KEY,
    agent_id   uuid        NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    user_id    text        NOT NULL,
    content    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX parked_messages_agent_idx ON parked_messages (agent_id);

---- create above / drop below ----

DROP TABLE parked_messages;
