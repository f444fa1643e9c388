package sapindex

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sapagent/sapagent/internal/sap"
)

// Index reads and writes a workspace's SAP index in Postgres.
type Index struct {
	Pool *pgxpool.Pool
}

// New returns the index over a pool (the store's).
func New(pool *pgxpool.Pool) *Index { return &Index{Pool: pool} }

// ErrNoRun is returned when a page names a sync run that does not exist for its connection and
// workspace (the run row must be written before the first page: sap_sync_phase_cursors has a
// foreign key on it).
var ErrNoRun = errors.New("sync run not found for this connection")

// Target is where a page goes: the run (whose cursor it advances), the connection's build
// generation and the phase.
type Target struct {
	RunID        uuid.UUID
	WorkspaceID  uuid.UUID
	ConnectionID uuid.UUID
	Generation   int64
	Phase        string
}

// PhaseState is a phase's committed position in a run.
type PhaseState struct {
	Cursor string `json:"cursor"` // the cursor to fetch next (empty with Done)
	Items  int64  `json:"items"`  // items committed so far
	Done   bool   `json:"done"`
	// Of the page just written, not stored:
	Replayed  bool     `json:"replayed,omitempty"`  // an earlier attempt had committed it; nothing written
	Malformed []string `json:"malformed,omitempty"` // items skipped, with the reason (at most 10)
	Skipped   int      `json:"skipped,omitempty"`   // how many items were skipped as malformed
}

const maxMalformedReported = 10

// WritePage writes one page of a phase exactly once: in one transaction it checks that the
// phase's cursor still is cursorBefore (otherwise an earlier attempt committed this page: nothing
// is written and the stored state is returned), copies the page's rows and search entries into
// the build generation and advances the cursor (done when the page has no next cursor).
// Malformed items are skipped and reported in the state; they never fail the page.
func (x *Index) WritePage(ctx context.Context, t Target, cursorBefore string, page sap.IndexPage) (PhaseState, error) {
	if t.Generation <= 0 {
		return PhaseState{}, fmt.Errorf("write page: generation %d is not a build generation", t.Generation)
	}
	if !knownPhase(t.Phase) {
		return PhaseState{}, fmt.Errorf("write page: unknown index phase %q", t.Phase)
	}
	if page.NextCursor != "" && page.NextCursor == cursorBefore {
		return PhaseState{}, fmt.Errorf("write page: the connector returned cursor %q as the next cursor again; the phase would never end", cursorBefore)
	}
	rows, entries, malformed, skipped := mapPage(t.Phase, page.Items)
	// Fast path: COPY. Duplicates across pages or phases (a connector repeating an item, an
	// enhancement that custom_objects listed already) make it fail; then the page is written
	// again with INSERT … ON CONFLICT DO NOTHING, which keeps the first.
	conflicts := t.Phase == PhaseEnhancements || t.Phase == PhaseS4Extensions
	st, err := x.writePage(ctx, t, cursorBefore, page, rows, entries, !conflicts)
	if err != nil && isUniqueViolation(err) {
		st, err = x.writePage(ctx, t, cursorBefore, page, rows, entries, false)
	}
	if err != nil {
		return PhaseState{}, err
	}
	if !st.Replayed {
		st.Malformed, st.Skipped = malformed, skipped
	}
	return st, nil
}

func (x *Index) writePage(ctx context.Context, t Target, cursorBefore string, page sap.IndexPage, rows []Row, entries []Entry, copyEntries bool) (PhaseState, error) {
	var st PhaseState
	err := pgx.BeginFunc(ctx, x.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO sap_sync_phase_cursors (run_id, phase)
			SELECT id, $2 FROM sap_sync_runs WHERE id = $1 AND connection_id = $3 AND workspace_id = $4
			ON CONFLICT DO NOTHING`, t.RunID, t.Phase, t.ConnectionID, t.WorkspaceID); err != nil {
			return err
		}
		var current, last int64
		err := tx.QueryRow(ctx, `SELECT c.cursor, c.items, c.done, coalesce(g.generation, 0), coalesce(g.last_generation, 0)
			FROM sap_sync_phase_cursors c
			JOIN sap_sync_runs r ON r.id = c.run_id
			LEFT JOIN workspace_sap_graph g ON g.connection_id = r.connection_id
			WHERE c.run_id = $1 AND c.phase = $2 AND r.connection_id = $3 AND r.workspace_id = $4
			FOR UPDATE OF c`, t.RunID, t.Phase, t.ConnectionID, t.WorkspaceID).Scan(&st.Cursor, &st.Items, &st.Done, &current, &last)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNoRun
		}
		if err != nil {
			return err
		}
		// Only a build's own generation: never the one readers see, never one not handed out.
		if t.Generation == current || t.Generation > last {
			return fmt.Errorf("write page: generation %d is not a build of this connection (current %d, last handed out %d)", t.Generation, current, last)
		}
		if st.Done || st.Cursor != cursorBefore {
			st.Replayed = true
			return nil
		}
		if copyEntries {
			if err := copyRows(ctx, tx, t, rows); err != nil {
				return err
			}
			if err := copyEntriesFast(ctx, tx, t, entries); err != nil {
				return err
			}
		} else {
			if err := insertRows(ctx, tx, t, rows); err != nil {
				return err
			}
			if err := insertEntries(ctx, tx, t, entries); err != nil {
				return err
			}
		}
		return tx.QueryRow(ctx, `UPDATE sap_sync_phase_cursors SET cursor = $3, items = items + $4, done = $3 = ''
			WHERE run_id = $1 AND phase = $2 RETURNING cursor, items, done`,
			t.RunID, t.Phase, page.NextCursor, len(page.Items)).Scan(&st.Cursor, &st.Items, &st.Done)
	})
	return st, err
}

// mapPage maps a page's items, dropping malformed ones and repeats within the page.
func mapPage(phase string, items []map[string]any) (rows []Row, entries []Entry, malformed []string, skipped int) {
	rows = make([]Row, 0, len(items))
	seenRow := make(map[string]bool, len(items))
	seenEntry := map[string]bool{}
	for i, item := range items {
		row, entry, err := MapItem(phase, item)
		if err != nil {
			skipped++
			if len(malformed) < maxMalformedReported {
				malformed = append(malformed, fmt.Sprintf("item %d: %v", i, err))
			}
			continue
		}
		key := row.ObjectType + "\x00" + row.ObjectName + "\x00" + row.ItemKey
		if seenRow[key] {
			continue
		}
		seenRow[key] = true
		rows = append(rows, row)
		if entry != nil {
			key := entry.ObjectType + "\x00" + entry.ObjectName
			if !seenEntry[key] {
				seenEntry[key] = true
				entries = append(entries, *entry)
			}
		}
	}
	return rows, entries, malformed, skipped
}

var rowColumns = []string{"connection_id", "workspace_id", "generation", "phase", "object_type", "object_name", "item_key", "package", "description", "data", "content_hash"}
var entryColumns = []string{"connection_id", "workspace_id", "generation", "category", "object_type", "object_name", "custom", "package", "title", "body", "release_state", "content_hash"}

func copyRows(ctx context.Context, tx pgx.Tx, t Target, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"workspace_sap_index"}, rowColumns, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		r := &rows[i]
		return []any{t.ConnectionID, t.WorkspaceID, t.Generation, t.Phase, r.ObjectType, r.ObjectName, r.ItemKey, r.Package, r.Description, string(r.Data), r.Hash}, nil
	}))
	return err
}

func copyEntriesFast(ctx context.Context, tx pgx.Tx, t Target, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"sap_search_entries"}, entryColumns, pgx.CopyFromSlice(len(entries), func(i int) ([]any, error) {
		e := &entries[i]
		return []any{t.ConnectionID, t.WorkspaceID, t.Generation, e.Category, e.ObjectType, e.ObjectName, e.Custom, e.Package, e.Title, e.Body, e.ReleaseState, e.Hash}, nil
	}))
	return err
}

func insertRows(ctx context.Context, tx pgx.Tx, t Target, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	n := len(rows)
	types, names, keys, pkgs, descs, data, hashes := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([][]byte, n)
	for i, r := range rows {
		types[i], names[i], keys[i], pkgs[i], descs[i], data[i], hashes[i] = r.ObjectType, r.ObjectName, r.ItemKey, r.Package, r.Description, string(r.Data), r.Hash
	}
	_, err := tx.Exec(ctx, `INSERT INTO workspace_sap_index (`+strings.Join(rowColumns, ", ")+`)
		SELECT $1, $2, $3, $4, u.* FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[]::jsonb[], $11::bytea[]) AS u
		ON CONFLICT DO NOTHING`, t.ConnectionID, t.WorkspaceID, t.Generation, t.Phase, types, names, keys, pkgs, descs, data, hashes)
	return err
}

func insertEntries(ctx context.Context, tx pgx.Tx, t Target, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	n := len(entries)
	cats, types, names, pkgs, titles, bodies, states, hashes, custom := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([][]byte, n), make([]bool, n)
	for i, e := range entries {
		cats[i], types[i], names[i], custom[i], pkgs[i], titles[i], bodies[i], states[i], hashes[i] = e.Category, e.ObjectType, e.ObjectName, e.Custom, e.Package, e.Title, e.Body, e.ReleaseState, e.Hash
	}
	_, err := tx.Exec(ctx, `INSERT INTO sap_search_entries (`+strings.Join(entryColumns, ", ")+`)
		SELECT $1, $2, $3, u.* FROM unnest($4::text[], $5::text[], $6::text[], $7::bool[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bytea[]) AS u
		ON CONFLICT DO NOTHING`, t.ConnectionID, t.WorkspaceID, t.Generation, cats, types, names, custom, pkgs, titles, bodies, states, hashes)
	return err
}

// PhaseCursor is a phase's committed state in a run (zero when no page was written yet): a
// retried activity resumes from its cursor.
func (x *Index) PhaseCursor(ctx context.Context, runID uuid.UUID, phase string) (PhaseState, error) {
	var st PhaseState
	err := x.Pool.QueryRow(ctx, `SELECT cursor, items, done FROM sap_sync_phase_cursors WHERE run_id = $1 AND phase = $2`,
		runID, phase).Scan(&st.Cursor, &st.Items, &st.Done)
	if errors.Is(err, pgx.ErrNoRows) {
		return PhaseState{}, nil
	}
	return st, err
}

// RecordChanges stores the objects a delta run found changed (sap_sync_changes). Idempotent: a
// retried call, or an object listed twice, leaves one row per object with its last change type.
func (x *Index) RecordChanges(ctx context.Context, runID uuid.UUID, changes []sap.Change) error {
	last := make(map[[2]string]string, len(changes))
	var order [][2]string
	for _, c := range changes {
		k := [2]string{strings.ToUpper(strings.TrimSpace(c.ObjectType)), strings.ToUpper(strings.TrimSpace(c.ObjectName))}
		if k[0] == "" || k[1] == "" {
			return fmt.Errorf("record changes: change %d has no object type or name", c.Seq)
		}
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = c.ChangeType
	}
	const batch = 5000
	for start := 0; start < len(order); start += batch {
		part := order[start:min(start+batch, len(order))]
		types, names, kinds := make([]string, len(part)), make([]string, len(part)), make([]string, len(part))
		for i, k := range part {
			types[i], names[i], kinds[i] = k[0], k[1], last[k]
		}
		if _, err := x.Pool.Exec(ctx, `INSERT INTO sap_sync_changes (run_id, object_type, object_name, change_type)
			SELECT $1, u.* FROM unnest($2::text[], $3::text[], $4::text[]) AS u
			ON CONFLICT (run_id, object_type, object_name) DO UPDATE SET change_type = excluded.change_type`,
			runID, types, names, kinds); err != nil {
			return fmt.Errorf("record changes: %w", err)
		}
	}
	return nil
}

func knownPhase(p string) bool {
	for _, q := range Phases("S4HANA") {
		if p == q {
			return true
		}
	}
	return false
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
