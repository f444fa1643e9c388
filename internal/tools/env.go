package tools

import (
	"context"
	"encoding/json"
	"time"
)

// Runner executes one call with arguments already validated against the tool's schema. Its
// result is JSON-encoded for the model; its error is a sentence the model reads (the tool
// failed, the conversation goes on).
type Runner func(ctx context.Context, env Env, args map[string]any) (any, error)

// Env is what a running tool may reach, for one call. The worker's activities implement it;
// definitions stay pure and name only the capability they use, so a tool's code lives with its
// schema and mode while every I/O dependency stays outside this package.
type Env interface {
	// Notes are the conversation's notes.
	Notes() Notes
	// SAP is the calling user's SAP connections, resolved once per call: every helper of a
	// script shares it, so a BAPI and its commit run in one SAP session.
	SAP(ctx context.Context) (SAPExecutor, error)
	// Script runs an execute_code script; its helper calls dispatch through the same
	// definitions, with this Env.
	Script(ctx context.Context, code string) (json.RawMessage, error)
}

// Notes stores the conversation's notes.
type Notes interface {
	// List returns up to limit notes, newest first.
	List(ctx context.Context, limit int) ([]Note, error)
	// Save stores n under an ID derived from the tool call (a retried call saves it once) and
	// returns it with that ID.
	Save(ctx context.Context, n Note) (Note, error)
}

// Note is one saved note, as the model sees it.
type Note struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	Draft     bool      `json:"draft"`
	CreatedAt time.Time `json:"created_at"`
}

// Situation is what a conversation has when its tools are offered to the model.
type Situation struct {
	Connections int             // SAP connections of the workspace
	DirectCall  map[string]bool // DIRECT_CALL_TOOLS: execute_code helpers also offered directly
}

// Direct reports whether the model may call the tool itself rather than only inside
// execute_code (directCall is DIRECT_CALL_TOOLS).
func (d *Definition) Direct(directCall map[string]bool) bool {
	return d.DirectCallAllowed || directCall[d.Name]
}

// Offered reports whether the model is offered the tool in s.
func (d *Definition) Offered(s Situation) bool {
	return d.Direct(s.DirectCall) && s.Connections >= d.Connections
}

// Offered lists the tools offered in s, in name order.
func (r *Registry) Offered(s Situation) []*Definition {
	var out []*Definition
	for _, name := range r.names {
		if d := r.byName[name]; d.Offered(s) {
			out = append(out, d)
		}
	}
	return out
}
