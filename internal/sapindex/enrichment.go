package sapindex

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The writes of the enrichment steps (internal/sapenrich computes what they store): Clean
// Core levels, generated docs and their search entries, embeddings. Here so that every table
// of the index has one writer.

// Scoped is the index generation an enrichment write goes to.
type Scoped struct {
	ConnectionID uuid.UUID
	WorkspaceID  uuid.UUID
	Generation   int64
}

// CleanCoreRow is one custom object's Clean Core level (clean_core_analysis).
type CleanCoreRow struct {
	ObjectType, ObjectName, Package, Level string
	Findings, Conversion                   []byte // JSON arrays
}

// UpsertCleanCore writes a batch of levels in one statement.
func (x *Index) UpsertCleanCore(ctx context.Context, s Scoped, rows []CleanCoreRow) error {
	n := len(rows)
	types, names, pkgs, levels := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	findings, conv := make([]string, n), make([]string, n)
	for i, r := range rows {
		types[i], names[i], pkgs[i], levels[i] = r.ObjectType, r.ObjectName, r.Package, r.Level
		findings[i], conv[i] = string(r.Findings), string(r.Conversion)
	}
	_, err := x.Pool.Exec(ctx, `INSERT INTO clean_core_analysis
			(connection_id, workspace_id, generation, object_type, object_name, package, level, findings, conversion)
		SELECT $1, $2, $3, t.typ, t.name, t.pkg, t.level, t.findings::jsonb, t.conv::jsonb
		FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) AS t(typ, name, pkg, level, findings, conv)
		ON CONFLICT (connection_id, generation, object_type, object_name) DO UPDATE
		SET package = EXCLUDED.package, level = EXCLUDED.level, findings = EXCLUDED.findings, conversion = EXCLUDED.conversion`,
		s.ConnectionID, s.WorkspaceID, s.Generation, types, names, pkgs, levels, findings, conv)
	return err
}

// RemoveDeletedCleanCore deletes the levels of the objects a delta run changed that are no
// longer custom objects of the generation; it returns how many.
func (x *Index) RemoveDeletedCleanCore(ctx context.Context, s Scoped, runID uuid.UUID) (int64, error) {
	tag, err := x.Pool.Exec(ctx, `DELETE FROM clean_core_analysis a
			WHERE a.connection_id = $1 AND a.workspace_id = $2 AND a.generation = $3`+ChangedFilter("a")+`
			AND NOT EXISTS (SELECT 1 FROM workspace_sap_index o WHERE o.connection_id = a.connection_id
				AND o.generation = a.generation AND o.phase = 'custom_objects'
				AND o.object_type = a.object_type AND o.object_name = a.object_name)`, s.ConnectionID, s.WorkspaceID, s.Generation, runID)
	return tag.RowsAffected(), err
}

// ChangedFilter restricts an alias's (object_type, object_name) to a delta run's changes
// (sap_sync_changes) when $4, the run ID, is not NULL.
func ChangedFilter(alias string) string {
	return ` AND ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM sap_sync_changes ch WHERE ch.run_id = $4 AND ch.object_type = ` + alias +
		`.object_type AND ch.object_name = ` + alias + `.object_name))`
}

// GeneratedDoc is one doc the model (or the ER diagram builder) wrote (sap_generated_docs).
type GeneratedDoc struct {
	Kind, Subject, Title, Markdown string
	InputHash                      []byte // what it was written from
	Model                          string
}

// SaveDoc stores a doc as confirmed for the generation.
func (x *Index) SaveDoc(ctx context.Context, s Scoped, d GeneratedDoc) error {
	_, err := x.Pool.Exec(ctx, `INSERT INTO sap_generated_docs
			(connection_id, workspace_id, kind, subject, title, markdown, input_hash, model, generation, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now())
		ON CONFLICT (connection_id, kind, subject) DO UPDATE
		SET workspace_id = EXCLUDED.workspace_id, title = EXCLUDED.title, markdown = EXCLUDED.markdown,
			input_hash = EXCLUDED.input_hash, model = EXCLUDED.model, generation = EXCLUDED.generation, updated_at = now()`,
		s.ConnectionID, s.WorkspaceID, d.Kind, d.Subject, d.Title, d.Markdown, d.InputHash, d.Model, s.Generation)
	return err
}

// ConfirmDocs marks unchanged docs ({kind, subject}) as confirmed for the generation.
func (x *Index) ConfirmDocs(ctx context.Context, s Scoped, docs [][2]string) error {
	// One statement per doc by primary key, pipelined (see SetMissingEmbeddings for why not
	// one UPDATE … FROM unnest).
	batch := &pgx.Batch{}
	for _, k := range docs {
		batch.Queue(`UPDATE sap_generated_docs SET generation = $3 WHERE connection_id = $1 AND kind = $4 AND subject = $5
			AND workspace_id = $2 AND generation < $3`, s.ConnectionID, s.WorkspaceID, s.Generation, k[0], k[1])
	}
	return x.Pool.SendBatch(ctx, batch).Close()
}

// DocPrune is what PruneDocs removed, and which of its deletes failed (Step "" when none).
type DocPrune struct {
	Removed int64
	Step    string // "process docs", "object docs", "package docs", "diagrams"
}

// PruneDocs removes docs whose subject is gone: objects and packages no longer in the index,
// ER diagrams not confirmed by a full run (full), processes not in processIDs.
func (x *Index) PruneDocs(ctx context.Context, s Scoped, processIDs []string, full bool) (DocPrune, error) {
	var out DocPrune
	exec := func(step, sql string, args ...any) error {
		tag, err := x.Pool.Exec(ctx, sql, args...)
		out.Removed += tag.RowsAffected()
		if err != nil {
			out.Step = step
		}
		return err
	}
	base := []any{s.ConnectionID, s.WorkspaceID, s.Generation}
	if err := exec("process docs", `DELETE FROM sap_generated_docs d WHERE d.connection_id = $1 AND d.workspace_id = $2
		AND d.kind = 'business_process' AND NOT (d.subject = ANY($3))`, s.ConnectionID, s.WorkspaceID, processIDs); err != nil {
		return out, err
	}
	if err := exec("object docs", `DELETE FROM sap_generated_docs d WHERE d.connection_id = $1 AND d.workspace_id = $2
		AND d.kind = 'object' AND d.subject NOT IN (SELECT o.object_type || ' ' || o.object_name FROM workspace_sap_index o
			WHERE o.connection_id = $1 AND o.generation = $3 AND o.phase = 'custom_objects')`, base...); err != nil {
		return out, err
	}
	if err := exec("package docs", `DELETE FROM sap_generated_docs d WHERE d.connection_id = $1 AND d.workspace_id = $2
		AND d.kind IN ('package', 'er_diagram') AND d.subject NOT IN (SELECT o.package FROM workspace_sap_index o
			WHERE o.connection_id = $1 AND o.generation = $3 AND o.phase = 'custom_objects')`, base...); err != nil {
		return out, err
	}
	if full {
		// Diagrams need no model, so a full run confirms every one that still exists.
		if err := exec("diagrams", `DELETE FROM sap_generated_docs WHERE connection_id = $1 AND workspace_id = $2 AND generation < $3
			AND kind = 'er_diagram'`, base...); err != nil {
			return out, err
		}
	}
	return out, nil
}

// UpsertDocEntries writes one search entry per generated doc into the generation, keeping
// an entry's embedding while its text is unchanged; it returns how many it wrote.
func (x *Index) UpsertDocEntries(ctx context.Context, s Scoped) (int64, error) {
	tag, err := x.Pool.Exec(ctx, `INSERT INTO sap_search_entries AS e
			(connection_id, workspace_id, generation, category, object_type, object_name, custom, package, title, body, content_hash)
		SELECT d.connection_id, d.workspace_id, $3, 'doc', 'DOC', d.kind || ':' || d.subject, true,
			CASE WHEN d.kind IN ('package', 'er_diagram') THEN d.subject ELSE '' END, d.title, d.markdown, sha256(convert_to(d.markdown, 'UTF8'))
		FROM sap_generated_docs d WHERE d.connection_id = $1 AND d.workspace_id = $2
		ON CONFLICT (connection_id, generation, object_type, object_name) DO UPDATE
		SET title = EXCLUDED.title, body = EXCLUDED.body, package = EXCLUDED.package, content_hash = EXCLUDED.content_hash,
			embedding = CASE WHEN e.content_hash = EXCLUDED.content_hash THEN e.embedding END
		WHERE e.content_hash <> EXCLUDED.content_hash OR e.title <> EXCLUDED.title`,
		s.ConnectionID, s.WorkspaceID, s.Generation)
	return tag.RowsAffected(), err
}

// RemoveStaleDocEntries deletes the generation's entries of docs that no longer exist.
func (x *Index) RemoveStaleDocEntries(ctx context.Context, s Scoped) error {
	_, err := x.Pool.Exec(ctx, `DELETE FROM sap_search_entries e WHERE e.connection_id = $1 AND e.workspace_id = $2
		AND e.generation = $3 AND e.object_type = 'DOC' AND e.object_name NOT IN (SELECT d.kind || ':' || d.subject
			FROM sap_generated_docs d WHERE d.connection_id = $1)`, s.ConnectionID, s.WorkspaceID, s.Generation)
	return err
}

// EntryKey names a search entry of a generation.
type EntryKey struct{ ObjectType, ObjectName string }

// SetMissingEmbeddings sets entries' embeddings (embs[i] for keys[i]) where they are still
// NULL, and returns how many it set: one statement per entry by primary key, pipelined in
// one round trip. (An UPDATE … FROM unnest(…) is one statement, but on freshly copied rows
// without statistics Postgres plans it as a scan of the whole generation per batch.)
func (x *Index) SetMissingEmbeddings(ctx context.Context, s Scoped, keys []EntryKey, embs [][]byte) (int64, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	b := &pgx.Batch{}
	for i, e := range keys {
		b.Queue(`UPDATE sap_search_entries SET embedding = $5 WHERE connection_id = $1 AND generation = $2
			AND object_type = $3 AND object_name = $4 AND workspace_id = $6 AND embedding IS NULL`,
			s.ConnectionID, s.Generation, e.ObjectType, e.ObjectName, embs[i], s.WorkspaceID)
	}
	br := x.Pool.SendBatch(ctx, b)
	var n int64
	for range keys {
		tag, err := br.Exec()
		if err != nil {
			_ = br.Close()
			return n, err
		}
		n += tag.RowsAffected()
	}
	return n, br.Close()
}
