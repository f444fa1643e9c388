// Package schemas embeds the Postgres migrations (and, later, the JSON schemas of the
// event protocol) so every binary carries the schema it expects.
package schemas

import "embed"

// Migrations holds tern-format SQL migrations: NNN_name.sql, "---- create above / drop below ----".
//
//go:embed migrations/*.sql
var Migrations embed.FS

// EventsSchema is the JSON schema of every frame on the event stream (docs/events.md).
//
//go:embed events.schema.json
var EventsSchema []byte
