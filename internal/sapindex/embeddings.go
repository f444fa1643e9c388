package sapindex

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// Embeddings of search entries are computed by the sync's enrichment before the switch and cached
// by content hash: CarryEmbeddings copies the embedding of every entry whose content did not
// change from the current generation, so only new or changed entries are sent to the model.

// EmbeddingInput is an entry that has no embedding yet and the text to embed for it.
type EmbeddingInput struct {
	ObjectType string
	ObjectName string
	Text       string
}

// EmbeddingText is what an entry's embedding is computed from (and a query is compared to).
func EmbeddingText(name, title, body string) string {
	return name + ": " + title + ". " + body
}

// CarryEmbeddings copies embeddings from generation from to the entries of generation to whose
// content hash is unchanged; it returns how many it copied.
func (x *Index) CarryEmbeddings(ctx context.Context, connectionID uuid.UUID, from, to int64) (int64, error) {
	tag, err := x.Pool.Exec(ctx, `UPDATE sap_search_entries t SET embedding = f.embedding
		FROM sap_search_entries f
		WHERE t.connection_id = $1 AND t.generation = $3 AND t.embedding IS NULL
		  AND f.connection_id = $1 AND f.generation = $2 AND f.object_type = t.object_type AND f.object_name = t.object_name
		  AND f.content_hash = t.content_hash AND f.embedding IS NOT NULL`, connectionID, from, to)
	if err != nil {
		return 0, fmt.Errorf("carry embeddings: %w", err)
	}
	return tag.RowsAffected(), nil
}

// PendingEmbeddings lists up to limit entries of a generation without an embedding, after the
// object (type, name) given (empty: from the start), in key order: page through them.
func (x *Index) PendingEmbeddings(ctx context.Context, connectionID uuid.UUID, generation int64, afterType, afterName string, limit int) ([]EmbeddingInput, error) {
	rows, err := x.Pool.Query(ctx, `SELECT object_type, object_name, title, body FROM sap_search_entries
		WHERE connection_id = $1 AND generation = $2 AND embedding IS NULL AND (object_type, object_name) > ($3, $4)
		ORDER BY object_type, object_name LIMIT $5`, connectionID, generation, afterType, afterName, limit)
	if err != nil {
		return nil, fmt.Errorf("pending embeddings: %w", err)
	}
	defer rows.Close()
	var out []EmbeddingInput
	for rows.Next() {
		var in EmbeddingInput
		var title, body string
		if err := rows.Scan(&in.ObjectType, &in.ObjectName, &title, &body); err != nil {
			return nil, err
		}
		in.Text = EmbeddingText(in.ObjectName, title, body)
		out = append(out, in)
	}
	return out, rows.Err()
}

// StoreEmbeddings writes the embeddings of entries (vectors[i] for inputs[i]), quantised.
func (x *Index) StoreEmbeddings(ctx context.Context, connectionID uuid.UUID, generation int64, inputs []EmbeddingInput, vectors [][]float32) error {
	if len(inputs) != len(vectors) {
		return fmt.Errorf("store embeddings: %d entries but %d vectors", len(inputs), len(vectors))
	}
	types, names, embs := make([]string, len(inputs)), make([]string, len(inputs)), make([][]byte, len(inputs))
	for i, in := range inputs {
		types[i], names[i], embs[i] = in.ObjectType, in.ObjectName, EncodeEmbedding(vectors[i])
	}
	_, err := x.Pool.Exec(ctx, `UPDATE sap_search_entries t SET embedding = u.e
		FROM unnest($3::text[], $4::text[], $5::bytea[]) AS u(ty, na, e)
		WHERE t.connection_id = $1 AND t.generation = $2 AND t.object_type = u.ty AND t.object_name = u.na`,
		connectionID, generation, types, names, embs)
	if err != nil {
		return fmt.Errorf("store embeddings: %w", err)
	}
	return nil
}
