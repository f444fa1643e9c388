package sapindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Generations (see schemas/migrations/012_sap_index.sql): every row of the generation-scoped
// tables carries the generation of the build that wrote it, readers filter on
// workspace_sap_graph.generation, and a build becomes visible in one transaction.
var generationTables = []string{"workspace_sap_index", "sap_search_entries", "clean_core_analysis"}

// ErrNoConnection is returned for a connection that does not exist in the workspace.
var ErrNoConnection = errors.New("connection not found in this workspace")

// ErrNoIndex is returned by a delta merge on a connection with no index to merge into.
var ErrNoIndex = errors.New("connection has no index yet; run a full sync first")

// BeginBuild hands out a new generation for a build (full or delta staging) of a connection,
// creating its graph row on the first build, and marks the graph syncing. current is the
// generation readers see (0: none yet).
func (x *Index) BeginBuild(ctx context.Context, workspaceID, connectionID uuid.UUID, systemType string) (generation, current int64, err error) {
	err = x.Pool.QueryRow(ctx, `INSERT INTO workspace_sap_graph AS g (connection_id, workspace_id, system_type, last_generation, status)
		SELECT c.id, c.workspace_id, $3, 1, 'syncing' FROM workspace_connections c WHERE c.id = $1 AND c.workspace_id = $2
		ON CONFLICT (connection_id) DO UPDATE SET last_generation = g.last_generation + 1, status = 'syncing',
			system_type = CASE WHEN excluded.system_type = '' THEN g.system_type ELSE excluded.system_type END, updated_at = now()
		RETURNING last_generation, generation`, connectionID, workspaceID, systemType).Scan(&generation, &current)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, ErrNoConnection
	}
	if err != nil {
		return 0, 0, fmt.Errorf("begin index build: %w", err)
	}
	return generation, current, nil
}

// Generation is the generation readers of a connection see (0: no index yet).
func (x *Index) Generation(ctx context.Context, connectionID uuid.UUID) (int64, error) {
	var g int64
	err := x.Pool.QueryRow(ctx, `SELECT generation FROM workspace_sap_graph WHERE connection_id = $1`, connectionID).Scan(&g)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return g, err
}

// SwitchFull makes a full build's generation the one readers see, in one transaction (status
// ready, change_seq, last_full_sync_at, counts), then deletes every other generation's rows in
// batches outside it. A switch to a generation older than the current one is refused (a stale
// retry after a newer build switched).
func (x *Index) SwitchFull(ctx context.Context, connectionID uuid.UUID, generation, changeSeq int64, counts Counts) error {
	c, err := json.Marshal(counts)
	if err != nil {
		return err
	}
	tag, err := x.Pool.Exec(ctx, `UPDATE workspace_sap_graph SET generation = $2, status = 'ready', change_seq = $3,
			last_full_sync_at = now(), counts = $4, updated_at = now()
		WHERE connection_id = $1 AND generation <= $2 AND last_generation >= $2`, connectionID, generation, changeSeq, c)
	if err != nil {
		return fmt.Errorf("switch index generation: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("switch index generation: generation %d is not a build of this connection newer than the current one", generation)
	}
	return x.prune(ctx, connectionID, generation)
}

// pruneBatch bounds each delete so no statement holds locks or builds WAL for minutes.
const pruneBatch = 20000

// prune deletes the rows of every generation but keep.
func (x *Index) prune(ctx context.Context, connectionID uuid.UUID, keep int64) error {
	for _, table := range generationTables {
		if err := x.deleteBatched(ctx, table, `connection_id = $1 AND generation <> $2`, connectionID, keep); err != nil {
			return err
		}
	}
	return nil
}

func (x *Index) deleteBatched(ctx context.Context, table, where string, args ...any) error {
	for {
		tag, err := x.Pool.Exec(ctx, `DELETE FROM `+table+` WHERE ctid = ANY (ARRAY(SELECT ctid FROM `+table+` WHERE `+where+` LIMIT `+fmt.Sprint(pruneBatch)+`))`, args...)
		if err != nil {
			return fmt.Errorf("delete %s rows: %w", table, err)
		}
		if tag.RowsAffected() < pruneBatch {
			return nil
		}
	}
}

// Abandon deletes the rows of a build that will not be switched to (cancelled, failed). It never
// deletes the generation readers see.
func (x *Index) Abandon(ctx context.Context, connectionID uuid.UUID, generation int64) error {
	cur, err := x.Generation(ctx, connectionID)
	if err != nil {
		return err
	}
	if generation == cur {
		return fmt.Errorf("abandon: generation %d is the one readers see", generation)
	}
	for _, table := range generationTables {
		if err := x.deleteBatched(ctx, table, `connection_id = $1 AND generation = $2`, connectionID, generation); err != nil {
			return err
		}
	}
	return nil
}

// MergeDelta applies a delta build to the current generation in one transaction: the current
// rows of every object the run recorded as changed (sap_sync_changes) and of every object the
// staging generation holds are deleted, the staging rows move to the current generation, and
// change_seq and last_delta_sync_at are updated. An object deleted in SAP is listed as changed
// and has no staging rows: it disappears.
func (x *Index) MergeDelta(ctx context.Context, connectionID uuid.UUID, stagingGen int64, runID uuid.UUID, changeSeq int64) error {
	return pgx.BeginFunc(ctx, x.Pool, func(tx pgx.Tx) error {
		var current, last int64
		err := tx.QueryRow(ctx, `SELECT generation, last_generation FROM workspace_sap_graph WHERE connection_id = $1 FOR UPDATE`, connectionID).Scan(&current, &last)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && current == 0) {
			return ErrNoIndex
		}
		if err != nil {
			return err
		}
		if stagingGen <= current || stagingGen > last {
			return fmt.Errorf("merge delta: generation %d is not a staging build newer than the current generation %d", stagingGen, current)
		}
		// workspace_sap_index: an object's rows of a phase are replaced when the staging build
		// wrote that phase for it; all its rows go when the change log lists it. Each delete is
		// driven by the delta's keys through an index, so a merge costs what the delta holds,
		// not what the index holds.
		if _, err := tx.Exec(ctx, `DELETE FROM workspace_sap_index c
			USING (SELECT DISTINCT phase, object_type, object_name FROM workspace_sap_index WHERE connection_id = $1 AND generation = $3) s
			WHERE c.connection_id = $1 AND c.generation = $2 AND c.phase = s.phase AND c.object_type = s.object_type AND c.object_name = s.object_name`,
			connectionID, current, stagingGen); err != nil {
			return fmt.Errorf("merge delta: %w", err)
		}
		for _, table := range generationTables {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` c USING sap_sync_changes ch
				WHERE ch.run_id = $3 AND c.connection_id = $1 AND c.generation = $2 AND c.object_type = ch.object_type AND c.object_name = ch.object_name`,
				connectionID, current, runID); err != nil {
				return fmt.Errorf("merge delta: %w", err)
			}
		}
		for _, table := range []string{"sap_search_entries", "clean_core_analysis"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` c USING `+table+` s
				WHERE s.connection_id = $1 AND s.generation = $3 AND c.connection_id = $1 AND c.generation = $2
				AND c.object_type = s.object_type AND c.object_name = s.object_name`,
				connectionID, current, stagingGen); err != nil {
				return fmt.Errorf("merge delta: %w", err)
			}
		}
		for _, table := range generationTables {
			if _, err := tx.Exec(ctx, `UPDATE `+table+` SET generation = $2 WHERE connection_id = $1 AND generation = $3`,
				connectionID, current, stagingGen); err != nil {
				return fmt.Errorf("merge delta: move %s: %w", table, err)
			}
		}
		// Docs the delta (re)wrote carry the staging generation: readers show docs up to the
		// current one, so they move with the rows.
		if _, err := tx.Exec(ctx, `UPDATE sap_generated_docs SET generation = $2 WHERE connection_id = $1 AND generation = $3`,
			connectionID, current, stagingGen); err != nil {
			return fmt.Errorf("merge delta: move docs: %w", err)
		}
		_, err = tx.Exec(ctx, `UPDATE workspace_sap_graph SET status = 'ready', change_seq = greatest(change_seq, $2),
			last_delta_sync_at = now(), updated_at = now() WHERE connection_id = $1`, connectionID, changeSeq)
		return err
	})
}

// SetCounts stores a connection's fingerprint (after a delta merge, or an enrichment).
func (x *Index) SetCounts(ctx context.Context, connectionID uuid.UUID, counts Counts) error {
	c, err := json.Marshal(counts)
	if err != nil {
		return err
	}
	_, err = x.Pool.Exec(ctx, `UPDATE workspace_sap_graph SET counts = $2, updated_at = now() WHERE connection_id = $1`, connectionID, c)
	return err
}

// ComputeCounts counts a generation's index: the fingerprint of Counts.
func (x *Index) ComputeCounts(ctx context.Context, connectionID uuid.UUID, generation int64) (Counts, error) {
	var c Counts
	err := x.Pool.QueryRow(ctx, `SELECT count(*),
			count(*) FILTER (WHERE category = 'table'),
			count(*) FILTER (WHERE category IN ('function', 'bapi')),
			count(*) FILTER (WHERE category = 'bapi')
		FROM sap_search_entries WHERE connection_id = $1 AND generation = $2`, connectionID, generation).
		Scan(&c.Entries, &c.Tables, &c.Functions, &c.BAPIs)
	if err != nil {
		return Counts{}, fmt.Errorf("count index: %w", err)
	}
	err = x.Pool.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE phase = 'custom_objects'),
			count(*) FILTER (WHERE phase = 'custom_code'),
			coalesce(sum(CASE WHEN jsonb_typeof(data->'lines') = 'number' THEN (data->>'lines')::numeric ELSE 0 END) FILTER (WHERE phase = 'custom_code'), 0)::bigint,
			count(*) FILTER (WHERE phase = 'relationships'),
			count(*) FILTER (WHERE phase = 'enhancements'),
			count(*) FILTER (WHERE phase = 's4_extensions')
		FROM workspace_sap_index WHERE connection_id = $1 AND generation = $2`, connectionID, generation).
		Scan(&c.CustomObjects, &c.CustomCode, &c.CodeLines, &c.Relationships, &c.Enhancements, &c.Extensions)
	if err != nil {
		return Counts{}, fmt.Errorf("count index: %w", err)
	}
	if err := x.Pool.QueryRow(ctx, `SELECT count(*) FROM sap_generated_docs WHERE connection_id = $1`, connectionID).Scan(&c.Docs); err != nil {
		return Counts{}, fmt.Errorf("count docs: %w", err)
	}
	if c.CleanCore, err = x.LevelCounts(ctx, Graph{ConnectionID: connectionID, Generation: generation}, ""); err != nil {
		return Counts{}, fmt.Errorf("count clean core: %w", err)
	}
	return c, nil
}
