package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/prompt"
	"github.com/sapagent/sapagent/internal/sandbox"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/saptools"
	"github.com/sapagent/sapagent/internal/script"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
)

// SAP is what SAP tools need from the worker process.
type SAP struct {
	Resolver *sapconn.Resolver
	// DirectCall names SAP tools the model may call directly (DIRECT_CALL_TOOLS); the others
	// are reached through execute_code.
	DirectCall  map[string]bool
	ScriptLimit script.Limits
	// Scripts runs execute_code scripts outside the worker process (internal/sandbox), so a
	// hostile script can kill only its sandbox.
	Scripts ScriptRunner
}

// ScriptRunner runs a script like script.Run, elsewhere; owner's turn comes in a fair queue
// shared by every conversation of the worker (sandbox.Owner).
type ScriptRunner interface {
	RunFor(ctx context.Context, owner sandbox.Owner, code string, helpers []script.Helper, call script.Call, limits script.Limits) (script.Result, error)
}

// connections resolves the workspace's connections for the calling user.
func (a *Activities) connections(ctx context.Context, workspaceID uuid.UUID, user string) ([]sapconn.Conn, error) {
	if a.SAP.Resolver == nil {
		return nil, errors.New("SAP tools are not configured in this worker")
	}
	return a.SAP.Resolver.Connections(ctx, workspaceID, user)
}

// codeResult is what execute_code returns to the model.
type codeResult struct {
	Output string           `json:"output"`
	Result any              `json:"result"`
	Calls  []codeCallRecord `json:"calls"`
	Error  string           `json:"error,omitempty"`
}

type codeCallRecord struct {
	Helper string `json:"helper"`
	MS     int64  `json:"ms"`
	Error  string `json:"error,omitempty"`
}

// runCode runs an execute_code script in a sandbox process. Its helpers are the
// execute-code-allowed tools, run here in the worker when the script calls them; each nested
// call is validated against its tool's schema like a direct call and runs through its
// definition with the script's env (one SAP session for the script). Approval, when a write
// helper is referenced, was given for the whole script by the workflow; each helper call that
// writes is checked against it as it runs (helperMayRun). Every failure of the
// script, its sandbox included, is the tool's error (a result the model reads), never the
// activity's, so Temporal does not run a script that killed its sandbox again.
func (a *Activities) runCode(ctx context.Context, env tools.Env, code string) (string, error) {
	if a.SAP.Scripts == nil {
		return "", errors.New("execute_code is not available: this worker has no script sandbox")
	}
	reg := a.registry()
	approved := approvalOf(ctx) // the script's approval: each helper call is checked against it
	call := func(ctx context.Context, _ int, helper string, hargs map[string]any) (any, error) {
		def, ok := reg.Get(helper)
		if !ok || !def.ExecuteCodeAllowed {
			return nil, fmt.Errorf("%s is not a helper", helper)
		}
		raw, err := json.Marshal(hargs)
		if err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		parsed, err := def.ParseArguments(string(raw))
		if err != nil {
			return nil, err
		}
		if err := helperMayRun(approved, def, parsed); err != nil {
			return nil, err
		}
		out, err := def.Run(ctx, env, parsed)
		if err != nil {
			return nil, err
		}
		// Scripts see plain JSON values.
		raw, err = json.Marshal(out)
		if err != nil {
			return nil, err
		}
		var v any
		err = json.Unmarshal(raw, &v)
		return v, err
	}
	res, runErr := a.SAP.Scripts.RunFor(ctx, a.scriptOwner(ctx, env), code, reg.Helpers(), call, a.SAP.ScriptLimit)
	out := codeResult{Output: res.Output, Result: res.Value}
	for _, c := range res.Calls {
		out.Calls = append(out.Calls, codeCallRecord{Helper: c.Helper, MS: c.Duration.Milliseconds(), Error: c.Err})
	}
	if runErr != nil {
		// The script's output so far helps the model fix it.
		text, _ := marshal(out)
		return "", fmt.Errorf("%v\nscript state: %s", runErr, text)
	}
	return marshal(out)
}

// codeDocs documents execute_code's helpers; it depends only on the registry and limits, so it
// is rendered once.
func (a *Activities) codeDocs() string {
	a.codeDocsOnce.Do(func() {
		a.codeDocsText = script.Documentation(a.registry().Helpers(), a.SAP.ScriptLimit)
	})
	return a.codeDocsText
}

// systemPrompt is the conversation's system prompt for the workspace's connections, cached.
// The index fingerprint comes from workspace_sap_graph; the cache keeps it five minutes (a
// finished sync invalidates it at once).
func (a *Activities) systemPrompt(ctx context.Context, workspaceID uuid.UUID, conns []store.Connection) string {
	in := prompt.Input{}
	key := workspaceID.String()
	names := map[uuid.UUID]string{}
	for _, c := range conns {
		in.Connections = append(in.Connections, prompt.Connection{ID: c.ID.String(), Name: c.Name, SystemType: c.SystemType, Simulated: c.Simulated})
		key += "|" + c.ID.String() + c.Name + c.SystemType + c.ConnectorURL + fmt.Sprint(c.Simulated)
		names[c.ID] = c.Name
	}
	return a.prompts.Get(key, func() prompt.Input {
		in.Index = a.indexFingerprints(ctx, workspaceID, names)
		return in
	})
}

// indexFingerprints summarises the workspace's built indexes; without Postgres the prompt
// simply has none (the conversation goes on).
func (a *Activities) indexFingerprints(ctx context.Context, workspaceID uuid.UUID, names map[uuid.UUID]string) []prompt.Fingerprint {
	if a.Store == nil || len(names) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	graphs, err := a.index().ListSAPGraphs(ctx, workspaceID)
	if err != nil {
		a.Log.Warn("index fingerprint unavailable", "error", err)
		return nil
	}
	var out []prompt.Fingerprint
	for _, g := range graphs {
		name, ok := names[g.ConnectionID]
		if !ok || g.Generation == 0 {
			continue
		}
		var c sapindex.Counts
		_ = json.Unmarshal(g.Counts, &c)
		at := g.UpdatedAt // the newest of the last full and delta syncs
		if g.LastFullSyncAt != nil {
			at = *g.LastFullSyncAt
		}
		if g.LastDeltaSyncAt != nil && (g.LastFullSyncAt == nil || g.LastDeltaSyncAt.After(at)) {
			at = *g.LastDeltaSyncAt
		}
		out = append(out, prompt.Fingerprint{Connection: name, Tables: c.Tables, Functions: c.Functions, BAPIs: c.BAPIs,
			CustomObjects: c.CustomObjects, CleanCore: c.CleanCore, IndexedAt: at})
	}
	return out
}

// etlLedger records ETL runs of one tool call in Postgres.
type etlLedger struct {
	st    *store.Store
	agent store.Agent
	user  string
}

func (l etlLedger) SucceededDryRun(ctx context.Context, fingerprint string) (bool, error) {
	return l.st.SucceededDryRun(ctx, l.agent.WorkspaceID, fingerprint)
}

func (l etlLedger) Record(ctx context.Context, r saptools.Run) error {
	src, err := uuid.Parse(r.Source)
	if err != nil {
		return err
	}
	dst, err := uuid.Parse(r.Target)
	if err != nil {
		return err
	}
	return l.st.RecordETLRun(ctx, store.ETLRun{WorkspaceID: l.agent.WorkspaceID, AgentID: l.agent.ID, UserID: l.user, Fingerprint: r.Fingerprint,
		SourceConnectionID: src, TargetConnectionID: dst, DryRun: r.DryRun, Extracted: r.Extracted, Inserted: r.Inserted, Updated: r.Updated, Failed: r.Failed})
}
