-- Tenancy: organizations with members, workspaces with members, and everything a workspace
-- owns. Users are identified by their token's subject (text): the identity provider owns them.
CREATE TABLE orgs (
    id         uuid PRIMARY KEY,
    name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_by text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE org_members (
    org_id     uuid        NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    user_id    text        NOT NULL,
    role       text        NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX org_members_user_idx ON org_members (user_id);

CREATE TABLE workspaces (
    id         uuid PRIMARY KEY,
    org_id     uuid        NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    settings   jsonb       NOT NULL DEFAULT '{}',
    created_by text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workspaces_org_idx ON workspaces (org_id);

CREATE TABLE workspace_members (
    workspace_id uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      text        NOT NULL,
    role         text        NOT NULL CHECK (role IN ('admin', 'member')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user_idx ON workspace_members (user_id);

CREATE TABLE workspace_connections (
    id            uuid PRIMARY KEY,
    workspace_id  uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name          text        NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    system_type   text        NOT NULL CHECK (system_type IN ('ECC', 'S4HANA')),
    connector_url text        NOT NULL DEFAULT '',
    environment   text        NOT NULL DEFAULT 'development' CHECK (environment IN ('development', 'test', 'production')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
);

-- Values are AES-256-GCM ciphertexts (nonce || sealed) under the key named by key_id.
CREATE TABLE connection_secrets (
    connection_id uuid        NOT NULL REFERENCES workspace_connections (id) ON DELETE CASCADE,
    name          text        NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{0,63}$'),
    key_id        text        NOT NULL,
    ciphertext    bytea       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connection_id, name)
);

CREATE TABLE user_connection_credentials (
    user_id             text        NOT NULL,
    connection_id       uuid        NOT NULL REFERENCES workspace_connections (id) ON DELETE CASCADE,
    sap_user            text        NOT NULL CHECK (length(sap_user) BETWEEN 1 AND 40),
    key_id              text        NOT NULL,
    password_ciphertext bytea       NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, connection_id)
);

CREATE TABLE files (
    id           uuid PRIMARY KEY,
    workspace_id uuid        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    uploaded_by  text        NOT NULL,
    name         text        NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    content_type text        NOT NULL,
    size_bytes   bigint      NOT NULL CHECK (size_bytes >= 0),
    sha256       text        NOT NULL,
    storage_key  text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX files_workspace_idx ON files (workspace_id, created_at DESC);

-- Agents created before tenancy move into a "Default" organization and workspace.
INSERT INTO orgs (id, name, created_by)
SELECT '00000000-0000-0000-0000-000000000001', 'Default organization', 'system'
WHERE EXISTS (SELECT 1 FROM agents);
INSERT INTO workspaces (id, org_id, name, created_by)
SELECT DISTINCT workspace_id, '00000000-0000-0000-0000-000000000001'::uuid, 'Default workspace', 'system' FROM agents;

ALTER TABLE agents
    ADD COLUMN created_by  text NOT NULL DEFAULT 'system',
    ADD COLUMN archived_at timestamptz,
    ADD CONSTRAINT agents_workspace_fk FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE;
ALTER TABLE agents ALTER COLUMN created_by DROP DEFAULT;

---- create above / drop below ----

ALTER TABLE agents DROP CONSTRAINT agents_workspace_fk, DROP COLUMN archived_at, DROP COLUMN created_by;
DROP TABLE files;
DROP TABLE user_connection_credentials;
DROP TABLE connection_secrets;
DROP TABLE workspace_connections;
DROP TABLE workspace_members;
DROP TABLE workspaces;
DROP TABLE org_members;
DROP TABLE orgs;
