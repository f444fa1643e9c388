-- Context compaction: a summary of older turns is a transcript row of role 'summary' whose parts
-- record the last seq it covers ({"type":"summary","through_seq":N}). The model sees the latest
-- summary instead of the turns it covers; users read it in the transcript like any message.
ALTER TABLE messages DROP CONSTRAINT messages_role_check;
ALTER TABLE messages ADD CONSTRAINT messages_role_check CHECK (role IN ('user', 'assistant', 'tool', 'system', 'summary'));
-- Every model request looks up the latest summary.
CREATE INDEX messages_summaries_idx ON messages (agent_id, seq) WHERE role = 'summary';

---- create above / drop below ----

DROP INDEX messages_summaries_idx;
DELETE FROM messages WHERE role = 'summary';
ALTER TABLE messages DROP CONSTRAINT messages_role_check;
ALTER TABLE messages ADD CONSTRAINT messages_role_check CHECK (role IN ('user', 'assistant', 'tool', 'system'));
