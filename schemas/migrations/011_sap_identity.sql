-- Nobody acts with someone else's SAP identity (issue 11, items 3 and 4).
--
-- credential_mode: whether a member without their own SAP login may use the connector's
-- technical user. Existing rows get the strict mode: the migration cannot tell a production
-- server from a development one, and a production connection must not keep serving everybody
-- as the technical user. An admin can relax it (PATCH {"credential_mode": …}).
ALTER TABLE workspace_connections ADD COLUMN credential_mode text NOT NULL DEFAULT 'user_login_required'
    CHECK (credential_mode IN ('user_login_required', 'technical_user_reads', 'technical_user_all'));

-- The connector origin (scheme://host[:port], lower-case, without user info, path or query) a
-- secret or login was entered for: it is sent only to that origin. '' for a connection without
-- a URL (the simulator).
CREATE FUNCTION connector_origin(url text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT lower(regexp_replace(url, '^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#@]*@)?([^/?#]*).*$', '\1\3'))
$$;

-- invalidated_reason: set (and the ciphertext wiped) when the connection's origin changed; the
-- value must be entered again. Existing values are bound to the connection's current origin.
ALTER TABLE connection_secrets ADD COLUMN origin text NOT NULL DEFAULT '',
    ADD COLUMN invalidated_reason text;
ALTER TABLE user_connection_credentials ADD COLUMN origin text NOT NULL DEFAULT '',
    ADD COLUMN invalidated_reason text;
UPDATE connection_secrets s SET origin = connector_origin(c.connector_url)
    FROM workspace_connections c WHERE c.id = s.connection_id;
UPDATE user_connection_credentials u SET origin = connector_origin(c.connector_url)
    FROM workspace_connections c WHERE c.id = u.connection_id;

---- create above / drop below ----
ALTER TABLE user_connection_credentials DROP COLUMN origin, DROP COLUMN invalidated_reason;
ALTER TABLE connection_secrets DROP COLUMN origin, DROP COLUMN invalidated_reason;
DROP FUNCTION connector_origin(text);
ALTER TABLE workspace_connections DROP COLUMN credential_mode;
