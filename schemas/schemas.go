// Package schemas embeds the Postgres migrations and the JSON schema of the event protocol so
// every binary carries the schema it expects.
package schemas

import "embed"

// Migrations holds tern-format SQL migrations: NNN_name.sql, "---- create above / drop below ----".
//
//go:embed migrations/*.sql
var Migrations embed.FS

// EventsSchema is the JSON schema of every frame on the event stream (docs/events.md),
// generated from the frame types in internal/events/frames (make generate).
//
//go:embed events.schema.json
var EventsSchema []byte
