-- The SAP landscape index (issue 12, seed 000 "SAP metadata indexing & enrichment"), built by
-- SAPSyncWorkflow per connection. See docs/sap-index.md.
--
-- Generations: a full sync writes every row under a new generation number and switches
-- workspace_sap_graph.generation to it in one transaction at the end, so readers (who always
-- filter on the graph's generation) never see half an index; the old generation's rows are
-- deleted after the switch. A delta writes only the changed objects under a staging generation
-- and merges them into the current one in one transaction. Rows of a cancelled or failed build
-- are deleted by the run that abandoned them (or the next one).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- When the connection's schedules run (Temporal Schedules, cron syntax, in sync_timezone).
ALTER TABLE workspace_connections
    ADD COLUMN sync_full_cron  text NOT NULL DEFAULT '0 2 * * 0',
    ADD COLUMN sync_delta_cron text NOT NULL DEFAULT '0 3 * * *',
    ADD COLUMN sync_timezone   text NOT NULL DEFAULT 'UTC';

-- One row per connection: the index readers see and the state of its sync.
CREATE TABLE workspace_sap_graph (
    connection_id      uuid PRIMARY KEY REFERENCES workspace_connections (id) ON DELETE CASCADE,
    workspace_id       uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    generation         bigint      NOT NULL DEFAULT 0, -- what readers see; 0: no index yet
    last_generation    bigint      NOT NULL DEFAULT 0, -- highest generation handed out to a build
    status             text        NOT NULL DEFAULT 'none' CHECK (status IN ('none', 'syncing', 'ready', 'failed')),
    change_seq         bigint      NOT NULL DEFAULT 0, -- the connector change-log position the index reflects
    system_type        text        NOT NULL DEFAULT '',
    last_full_sync_at  timestamptz,
    last_delta_sync_at timestamptz,
    counts             jsonb       NOT NULL DEFAULT '{}', -- fingerprint (sapindex.Counts)
    progress           jsonb       NOT NULL DEFAULT '{}', -- the running sync (sapindex.Progress)
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workspace_sap_graph_workspace ON workspace_sap_graph (workspace_id);

-- Every item the connector's index phases returned, as it came (data), per generation.
-- object_type/object_name: the object the item describes (for a relationship, its source);
-- item_key tells several items of one object in one phase apart ('' when there is one).
CREATE TABLE workspace_sap_index (
    connection_id uuid   NOT NULL REFERENCES workspace_connections (id) ON DELETE CASCADE,
    workspace_id  uuid   NOT NULL,
    generation    bigint NOT NULL,
    phase         text   NOT NULL,
    object_type   text   NOT NULL,
    object_name   text   NOT NULL,
    item_key      text   NOT NULL DEFAULT '',
    package       text   NOT NULL DEFAULT '',
    description   text   NOT NULL DEFAULT '',
    data          jsonb  NOT NULL,
    content_hash  bytea  NOT NULL,
    PRIMARY KEY (connection_id, generation, phase, object_type, object_name, item_key)
);
CREATE INDEX workspace_sap_index_object ON workspace_sap_index (connection_id, generation, object_type, object_name);

-- What search finds: one entry per SAP object (standard and custom) and per generated doc.
-- embedding: the entry's unit vector quantised to int8 (internal/sapindex), NULL until the
-- enrichment computed it; any dimension the embeddings model returns.
CREATE TABLE sap_search_entries (
    connection_id uuid    NOT NULL REFERENCES workspace_connections (id) ON DELETE CASCADE,
    workspace_id  uuid    NOT NULL,
    generation    bigint  NOT NULL,
    category      text    NOT NULL,
    object_type   text    NOT NULL,
    object_name   text    NOT NULL,
    custom        boolean NOT NULL DEFAULT false,
    package       text    NOT NULL DEFAULT '',
    title         text    NOT NULL DEFAULT '',
    body          text    NOT NULL DEFAULT '',
    release_state text    NOT NULL DEFAULT '',
    content_hash  bytea   NOT NULL,
    embedding     bytea,
    search        tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', replace(object_name, '_', ' ')), 'A') ||
        setweight(to_tsvector('english', title), 'B') ||
        setweight(to_tsvector('english', left(body, 4000)), 'C')) STORED,
    PRIMARY KEY (connection_id, generation, object_type, object_name)
);
CREATE INDEX sap_search_entries_fts ON sap_search_entries USING gin (search);
CREATE INDEX sap_search_entries_name_trgm ON sap_search_entries USING gin (object_name gin_trgm_ops);
CREATE INDEX sap_search_entries_name_prefix ON sap_search_entries (connection_id, generation, object_name text_pattern_ops);

-- Clean Core level of each custom object (internal/cleancore), with the usages behind it.
CREATE TABLE clean_core_analysis (
    connection_id uuid   NOT NULL REFERENCES workspace_connections (id) ON DELETE CASCADE,
    workspace_id  uuid   NOT NULL,
    generation    bigint NOT NULL,
    object_type   text   NOT NULL,
    object_name   text   NOT NULL,
    package       text   NOT NULL DEFAULT '',
    level         text   NOT NULL CHECK (level IN ('A', 'B', 'C', 'D')),
    findings      jsonb  NOT NULL DEFAULT '[]', -- the usages that set the level, with state, reason and successor
    conversion    jsonb  NOT NULL DEFAULT '[]', -- ECC: deprecated usages and their S/4HANA successors
    PRIMARY KEY (connection_id, generation, object_type, object_name)
);
CREATE INDEX clean_core_analysis_level ON clean_core_analysis (connection_id, generation, level);

-- Documentation the model wrote from the index. A cache keyed by what it was written from
-- (input_hash): a sync regenerates a doc only when its input changed.
CREATE TABLE sap_generated_docs (
    connection_id uuid        NOT NULL REFERENCES workspace_connections (id) ON DELETE CASCADE,
    workspace_id  uuid        NOT NULL,
    kind          text        NOT NULL CHECK (kind IN ('package', 'object', 'er_diagram', 'business_process')),
    subject       text        NOT NULL,
    title         text        NOT NULL,
    markdown      text        NOT NULL,
    input_hash    bytea       NOT NULL,
    model         text        NOT NULL DEFAULT '',
    generation    bigint      NOT NULL, -- the last index generation the doc was confirmed for
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connection_id, kind, subject)
);

-- One row per sync run, including runs skipped because nothing changed or another ran.
CREATE TABLE sap_sync_runs (
    id              uuid PRIMARY KEY,
    workspace_id    uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    connection_id   uuid        NOT NULL REFERENCES workspace_connections (id) ON DELETE CASCADE,
    workflow_id     text        NOT NULL,
    workflow_run_id text        NOT NULL,
    mode            text        NOT NULL CHECK (mode IN ('full', 'delta', 'enrich-only')),
    trigger         text        NOT NULL CHECK (trigger IN ('manual', 'schedule')),
    status          text        NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled', 'skipped')),
    requested_by    text        NOT NULL DEFAULT '',
    generation      bigint      NOT NULL DEFAULT 0,
    phases          jsonb       NOT NULL DEFAULT '{}', -- per phase: items, ms, status
    counts          jsonb       NOT NULL DEFAULT '{}',
    error           text        NOT NULL DEFAULT '',
    started_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz
);
CREATE INDEX sap_sync_runs_connection ON sap_sync_runs (connection_id, started_at DESC, id DESC);
CREATE INDEX sap_sync_runs_workspace ON sap_sync_runs (workspace_id, started_at DESC, id DESC);

-- A phase's position, committed in the same transaction as the rows of each page: a retried
-- activity resumes after the last committed page and never writes a row twice.
CREATE TABLE sap_sync_phase_cursors (
    run_id  uuid   NOT NULL REFERENCES sap_sync_runs (id) ON DELETE CASCADE,
    phase   text   NOT NULL,
    cursor  text   NOT NULL DEFAULT '',
    items   bigint NOT NULL DEFAULT 0,
    done    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (run_id, phase)
);

-- The objects a delta run found changed (probe_changes), so no workflow payload carries them.
CREATE TABLE sap_sync_changes (
    run_id      uuid NOT NULL REFERENCES sap_sync_runs (id) ON DELETE CASCADE,
    object_type text NOT NULL,
    object_name text NOT NULL,
    change_type text NOT NULL,
    PRIMARY KEY (run_id, object_type, object_name)
);

---- create above / drop below ----
DROP TABLE sap_sync_changes;
DROP TABLE sap_sync_phase_cursors;
DROP TABLE sap_sync_runs;
DROP TABLE sap_generated_docs;
DROP TABLE clean_core_analysis;
DROP TABLE sap_search_entries;
DROP TABLE workspace_sap_index;
DROP TABLE workspace_sap_graph;
ALTER TABLE workspace_connections DROP COLUMN sync_full_cron, DROP COLUMN sync_delta_cron, DROP COLUMN sync_timezone;
