package activities

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/saptools"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
)

// toolEnv is what one tool call reaches (tools.Env): the conversation's notes, the calling
// user's SAP connections and the script runner. A script's helper calls share it.
type toolEnv struct {
	a      *Activities
	agent  store.Agent
	user   string
	callID string

	mu  sync.Mutex
	sap *saptools.Executor
}

func (a *Activities) toolEnv(agent store.Agent, user, callID string) *toolEnv {
	return &toolEnv{a: a, agent: agent, user: user, callID: callID}
}

func (e *toolEnv) Notes() tools.Notes {
	return noteStore{st: e.a.Store, agentID: e.agent.ID, callID: e.callID}
}

// SAP resolves the user's connections on first use, once per call: a script's helpers run in
// one executor, so one SAP session (a BAPI and its commit belong together).
func (e *toolEnv) SAP(ctx context.Context) (tools.SAPExecutor, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sap == nil {
		conns, err := e.a.connections(ctx, e.agent.WorkspaceID, e.user)
		if err != nil {
			return nil, err
		}
		e.sap = saptools.New(conns)
		e.sap.Ledger = etlLedger{st: e.a.Store, agent: e.agent, user: e.user}
		if e.a.Store != nil {
			e.sap.Index = sapindex.Searcher{Pool: e.a.Store.Pool, WorkspaceID: e.agent.WorkspaceID, Embedder: e.a.searchEmbedder()}
		}
	}
	return e.sap, nil
}

func (e *toolEnv) Script(ctx context.Context, code string) (json.RawMessage, error) {
	out, err := e.a.runCode(ctx, e, code)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(out), nil
}

// noteNamespace derives a note's ID from its tool call, so a retried call saves it once.
var noteNamespace = uuid.MustParse("0b7d2c1e-3f4a-4e5b-8c6d-7e8f9a0b1c2d")

// noteStore keeps one conversation's notes in Postgres.
type noteStore struct {
	st      *store.Store
	agentID uuid.UUID
	callID  string
}

func (n noteStore) List(ctx context.Context, limit int) ([]tools.Note, error) {
	notes, err := n.st.ListNotes(ctx, n.agentID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]tools.Note, len(notes))
	for i, s := range notes {
		out[i] = tools.Note{ID: s.ID.String(), Title: s.Title, Body: s.Body, Draft: s.Draft, CreatedAt: s.CreatedAt}
	}
	return out, nil
}

func (n noteStore) Save(ctx context.Context, note tools.Note) (tools.Note, error) {
	id := uuid.NewSHA1(noteNamespace, []byte(n.agentID.String()+n.callID))
	if err := n.st.SaveNote(ctx, n.agentID, store.Note{ID: id, Title: note.Title, Body: note.Body, Draft: note.Draft}); err != nil {
		return tools.Note{}, err
	}
	note.ID = id.String()
	return note, nil
}
