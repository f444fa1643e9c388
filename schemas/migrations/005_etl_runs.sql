-- Every extract_transform_load run. A real load requires that the latest dry run of the same
-- fingerprint (mapping + source + target + filter) in the workspace found rows and refused none.
CREATE TABLE etl_runs (
    id                   bigserial PRIMARY KEY,
    workspace_id         uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    agent_id             uuid        REFERENCES agents (id) ON DELETE SET NULL,
    user_id              text        NOT NULL,
    fingerprint          text        NOT NULL,
    source_connection_id uuid        NOT NULL,
    target_connection_id uuid        NOT NULL,
    dry_run              boolean     NOT NULL,
    extracted            integer     NOT NULL,
    inserted             integer     NOT NULL,
    updated              integer     NOT NULL,
    failed               integer     NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX etl_runs_dry_runs ON etl_runs (workspace_id, fingerprint, id) WHERE dry_run;

---- create above / drop below ----

DROP TABLE etl_runs;
