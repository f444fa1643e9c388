-- A connection without a connector URL is answered by the built-in simulated SAP system only
-- when it says so: `simulated` is set when it is created (or changed) without a URL on a
-- development server, or explicitly ("simulated": true) on a production server, which refuses a
-- connection that has neither. A simulated connection has no URL.
--
-- Existing rows are not marked: the migration cannot tell which server runs on this database, and
-- a production server must not go on serving simulated data it used to serve silently. A
-- development server still simulates every connection without a URL; on a production server such
-- a connection answers tools with an error until an admin sets its connector_url or marks it
-- simulated (PATCH {"simulated": true}).
ALTER TABLE workspace_connections ADD COLUMN simulated boolean NOT NULL DEFAULT false;
ALTER TABLE workspace_connections ADD CONSTRAINT workspace_connections_simulated_without_url
    CHECK (NOT simulated OR connector_url = '');

---- create above / drop below ----
ALTER TABLE workspace_connections DROP COLUMN simulated;
