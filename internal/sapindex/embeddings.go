package sapindex

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// The reads of the enrichment's embedding step (internal/sapenrich embeds; SetMissingEmbeddings
// writes). Embeddings are cached by content hash: an entry whose (type, name, content hash) has
// an embedding in another generation gets that one, so only new or changed entries go to the model.

// CountMissingEmbeddings counts the generation's entries without an embedding.
func (x *Index) CountMissingEmbeddings(ctx context.Context, s Scoped) (int64, error) {
	var n int64
	err := x.Pool.QueryRow(ctx, `SELECT count(*) FROM sap_search_entries
		WHERE connection_id = $1 AND workspace_id = $2 AND generation = $3 AND embedding IS NULL`,
		s.ConnectionID, s.WorkspaceID, s.Generation).Scan(&n)
	return n, err
}

// OtherGenerations lists the connection's generations with entries other than s's, newest first.
func (x *Index) OtherGenerations(ctx context.Context, s Scoped) ([]int64, error) {
	// A loose index scan: one probe per generation instead of reading every entry.
	rows, err := x.Pool.Query(ctx, `WITH RECURSIVE g AS (
			SELECT min(generation) AS gen FROM sap_search_entries WHERE connection_id = $1
			UNION ALL
			SELECT (SELECT min(generation) FROM sap_search_entries WHERE connection_id = $1 AND generation > g.gen)
			FROM g WHERE g.gen IS NOT NULL)
		SELECT gen FROM g WHERE gen IS NOT NULL AND gen <> $2 ORDER BY gen DESC`, s.ConnectionID, s.Generation)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// CachedEmbedding is an entry without an embedding and the embedding of the same content in
// another generation (nil: none).
type CachedEmbedding struct {
	EntryKey
	Embedding []byte
}

// CachedEmbeddings returns the next limit entries without an embedding after the key given, in
// key order, each with the newest embedding of dim bytes of the same content in one of gens.
func (x *Index) CachedEmbeddings(ctx context.Context, s Scoped, after EntryKey, limit int, gens []int64, dim int) ([]CachedEmbedding, error) {
	rows, err := x.Pool.Query(ctx, `WITH batch AS (
			SELECT object_type, object_name, content_hash FROM sap_search_entries
			WHERE connection_id = $1 AND workspace_id = $2 AND generation = $3 AND embedding IS NULL
				AND (object_type, object_name) > ($4, $5)
			ORDER BY object_type, object_name LIMIT $6)
		SELECT b.object_type, b.object_name, src.embedding FROM batch b
		LEFT JOIN LATERAL (
			SELECT o.embedding FROM sap_search_entries o
			WHERE o.connection_id = $1 AND o.generation = ANY($7::bigint[]) AND o.object_type = b.object_type
				AND o.object_name = b.object_name AND o.content_hash = b.content_hash
				AND o.embedding IS NOT NULL AND length(o.embedding) = $8
			ORDER BY o.generation DESC LIMIT 1) src ON true
		ORDER BY b.object_type, b.object_name`,
		s.ConnectionID, s.WorkspaceID, s.Generation, after.ObjectType, after.ObjectName, limit, gens, dim)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (CachedEmbedding, error) {
		var c CachedEmbedding
		err := row.Scan(&c.ObjectType, &c.ObjectName, &c.Embedding)
		return c, err
	})
}

// EntryContent is what an entry's embedding is computed from.
type EntryContent struct {
	EntryKey
	Title, Body string
}

// EntriesWithoutEmbedding returns the next limit entries without an embedding after the key
// given, in key order, with at most bodyChars characters of each body.
func (x *Index) EntriesWithoutEmbedding(ctx context.Context, s Scoped, after EntryKey, limit, bodyChars int) ([]EntryContent, error) {
	rows, err := x.Pool.Query(ctx, `SELECT object_type, object_name, title, left(body, $7) FROM sap_search_entries
		WHERE connection_id = $1 AND workspace_id = $2 AND generation = $3 AND embedding IS NULL
			AND (object_type, object_name) > ($4, $5)
		ORDER BY object_type, object_name LIMIT $6`,
		s.ConnectionID, s.WorkspaceID, s.Generation, after.ObjectType, after.ObjectName, limit, bodyChars)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (EntryContent, error) {
		var e EntryContent
		err := row.Scan(&e.ObjectType, &e.ObjectName, &e.Title, &e.Body)
		return e, err
	})
}
