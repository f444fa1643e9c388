-- A sync never hangs silently (issue 20): while the connector fails and the run's phase is
-- retried, the run says what it waits for ({reason, phase, attempt, since}); NULL when it is
-- not waiting. Cleared by the next page that arrives and when the run finishes.
ALTER TABLE sap_sync_runs ADD COLUMN waiting jsonb;

---- create above / drop below ----

ALTER TABLE sap_sync_runs DROP COLUMN waiting;
