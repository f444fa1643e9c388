package sapindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Search modes.
const (
	SearchKeyword  = "keyword"
	SearchSemantic = "semantic"
	SearchHybrid   = "hybrid"
)

// ValidSearchMode reports whether m is a search mode ("" picks hybrid, or keyword without an embedder).
func ValidSearchMode(m string) bool {
	return m == "" || m == SearchKeyword || m == SearchSemantic || m == SearchHybrid
}

// Embedder turns texts into vectors (the embeddings model, or a deterministic one in tests).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Query is a search over a workspace's indexed connections.
type Query struct {
	WorkspaceID   uuid.UUID
	ConnectionIDs []uuid.UUID // empty: every connection of the workspace
	Text          string
	Category      string // "" any; table, function, bapi, class, program, cds_view, enhancement, extension, …
	ObjectType    string // "" any; a TADIR type (TABL, FUNC, CLAS, …)
	Custom        *bool  // nil: standard and custom
	Mode          string // keyword | semantic | hybrid ("" hybrid)
	Limit         int    // default 20, at most 200
	Detail        bool   // include each hit's body
}

// Hit is one object found.
type Hit struct {
	ConnectionID uuid.UUID `json:"connection_id"`
	Type         string    `json:"type"`
	Name         string    `json:"name"`
	Category     string    `json:"category"`
	Title        string    `json:"title"`
	Package      string    `json:"package,omitempty"`
	Custom       bool      `json:"custom"`
	ReleaseState string    `json:"release_state,omitempty"`
	Score        float64   `json:"score"`
	Match        string    `json:"match"` // exact, name, text, fuzzy, words, semantic
	Body         string    `json:"body,omitempty"`

	embedding []byte
	tier      int
}

// Result is what a search found, with the mode it actually used and the connections it could
// not search because they have no index yet.
type Result struct {
	Mode       string      `json:"mode"`
	Hits       []Hit       `json:"hits"`
	Searched   []uuid.UUID `json:"searched_connections"`
	NotIndexed []uuid.UUID `json:"not_indexed_connections,omitempty"`
	Note       string      `json:"note,omitempty"`
}

// Keyword tiers, best first: a hit's rank in keyword mode is its tier, then its score in it.
const (
	tierExact = iota
	tierName
	tierText
	tierFuzzy
	tierWords
)

var tierMatch = []string{"exact", "name", "text", "fuzzy", "words"}

// Candidate bounds: each keyword part returns at most this many rows, so no query ranks an
// unbounded set, and semantic reranking sees at most a few hundred candidates.
const (
	perPart         = 100
	semanticWords   = 300
	semanticScanMax = 10000 // a scope this small is reranked whole (every entry is a candidate)
	rrfK            = 60.0
)

var nameToken = regexp.MustCompile(`^[A-Za-z0-9_/*%.\-]+$`)

// Search finds objects in the current index generation of the workspace's connections.
func Search(ctx context.Context, pool *pgxpool.Pool, q Query, emb Embedder) (Result, error) {
	q.Text = strings.TrimSpace(q.Text)
	if q.Text == "" {
		return Result{}, errors.New("search: query text is empty")
	}
	if len(q.Text) > 500 {
		return Result{}, errors.New("search: query text is longer than 500 characters")
	}
	if !ValidSearchMode(q.Mode) {
		return Result{}, fmt.Errorf("search: unknown mode %q (keyword, semantic or hybrid)", q.Mode)
	}
	if q.Limit <= 0 {
		q.Limit = 20
	}
	q.Limit = min(q.Limit, 200)
	res := Result{Mode: q.Mode, Hits: []Hit{}}
	if res.Mode == "" {
		res.Mode = SearchHybrid
	}
	if emb == nil && res.Mode != SearchKeyword {
		res.Note = "no embeddings model is configured: keyword search only"
		res.Mode = SearchKeyword
	}

	scopes, notIndexed, err := searchScopes(ctx, pool, q)
	if err != nil {
		return Result{}, err
	}
	res.NotIndexed = notIndexed
	for _, s := range scopes {
		res.Searched = append(res.Searched, s.connection)
	}
	if len(scopes) == 0 {
		return res, nil
	}

	var qvec []byte
	if res.Mode != SearchKeyword {
		vecs, err := emb.Embed(ctx, []string{q.Text})
		if err != nil || len(vecs) != 1 {
			res.Note = fmt.Sprintf("the embeddings model failed (%v): keyword search only", errOr(err, "no vector"))
			res.Mode = SearchKeyword
		} else {
			qvec = EncodeEmbedding(vecs[0])
		}
	}

	var keyword, semantic []Hit
	for _, s := range scopes {
		k, cands, err := scopeHits(ctx, pool, q, s, res.Mode != SearchKeyword)
		if err != nil {
			return Result{}, err
		}
		keyword = append(keyword, k...)
		if res.Mode != SearchKeyword {
			semantic = append(semantic, rerank(append(k, cands...), qvec)...)
		}
	}
	keyword = rankKeyword(keyword)
	sort.SliceStable(semantic, func(i, j int) bool { return semantic[i].Score > semantic[j].Score })
	switch res.Mode {
	case SearchKeyword:
		res.Hits = keyword
	case SearchSemantic:
		res.Hits = semantic
		if len(semantic) == 0 && len(keyword) > 0 {
			res.Note = "no entry has an embedding yet (the sync computes them): keyword results"
			res.Hits = keyword
		}
	case SearchHybrid:
		res.Hits = fuse(keyword, semantic)
	}
	if len(res.Hits) > q.Limit {
		res.Hits = res.Hits[:q.Limit]
	}
	for i := range res.Hits {
		res.Hits[i].embedding = nil
	}
	return res, nil
}

type scope struct {
	connection uuid.UUID
	generation int64
	entries    int64
}

// searchScopes are the connections searched with their current generation; the requested (or
// all) connections without an index are returned apart.
func searchScopes(ctx context.Context, pool *pgxpool.Pool, q Query) ([]scope, []uuid.UUID, error) {
	ids := make([]string, len(q.ConnectionIDs))
	for i, id := range q.ConnectionIDs {
		ids[i] = id.String()
	}
	rows, err := pool.Query(ctx, `SELECT c.id, coalesce(g.generation, 0), coalesce(g.counts, '{}')
		FROM workspace_connections c LEFT JOIN workspace_sap_graph g ON g.connection_id = c.id AND g.workspace_id = c.workspace_id
		WHERE c.workspace_id = $1 AND (cardinality($2::uuid[]) = 0 OR c.id = ANY ($2::uuid[]))
		ORDER BY c.id`, q.WorkspaceID, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var scopes []scope
	var none []uuid.UUID
	found := map[uuid.UUID]bool{}
	for rows.Next() {
		var s scope
		var counts []byte
		if err := rows.Scan(&s.connection, &s.generation, &counts); err != nil {
			return nil, nil, err
		}
		found[s.connection] = true
		if s.generation == 0 {
			none = append(none, s.connection)
			continue
		}
		var c Counts
		_ = json.Unmarshal(counts, &c)
		s.entries = c.Entries
		scopes = append(scopes, s)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	for _, id := range q.ConnectionIDs {
		if !found[id] {
			return nil, nil, fmt.Errorf("search: connection %s is not in this workspace", id)
		}
	}
	return scopes, none, nil
}

// hitColumns are selected by every part; $6 says whether to include the body, $7 the embedding
// ($1–$5 and $8 are scopeFilter's).
const hitColumns = `e.object_type, e.object_name, e.category, e.custom, e.package, e.title, e.release_state,
	CASE WHEN $6::boolean THEN left(e.body, 4000) ELSE '' END, CASE WHEN $7::boolean THEN e.embedding END`

// scopeFilter: the workspace, the connection's current generation, category and custom flag.
const scopeFilter = `e.workspace_id = $1::uuid AND e.connection_id = $2::uuid AND e.generation = $3::bigint
	AND ($4::text = '' OR e.category = $4::text) AND ($5::boolean IS NULL OR e.custom = $5::boolean)
	AND ($8::text = '' OR e.object_type = $8::text)`

// scopeHits searches one connection's current generation in one read-only transaction: the
// keyword parts that fit the query in one statement (exact name, name pattern, full text with
// every word, full text with any word), the fuzzy name part only when no name matched, and, for
// semantic ranking, every entry of a small index as a candidate.
//
// Every part is bounded: full-text parts rank at most textCap matching entries (the first ones
// the index yields), so a query made of very common words costs the same as a rare one; the
// planner may not fall back to a sequential scan; the trigram threshold is raised so a fuzzy
// name does not recheck thousands of rows.
func scopeHits(ctx context.Context, pool *pgxpool.Pool, q Query, s scope, semantic bool) (keyword, candidates []Hit, err error) {
	err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('jit', 'off', true),
			set_config('pg_trgm.similarity_threshold', '0.5', true)`); err != nil {
			return err
		}
		var err error
		if keyword, err = keywordHits(ctx, tx, q, s, semantic, stageMain); err != nil {
			return err
		}
		named := false
		for _, h := range keyword {
			named = named || h.tier == tierExact || h.tier == tierName
		}
		if !named {
			fuzzy, err := keywordHits(ctx, tx, q, s, semantic, stageFallback)
			if err != nil {
				return err
			}
			keyword = append(keyword, fuzzy...)
		}
		// Any-word matches only when the query's own matches do not fill the page: their
		// bitmap (every entry with any of the words) is the costliest scan there is.
		if len(keyword) < q.Limit {
			words, err := keywordHits(ctx, tx, q, s, semantic, stageWords)
			if err != nil {
				return err
			}
			keyword = append(keyword, words...)
		}
		if semantic && s.entries > 0 && s.entries <= semanticScanMax {
			args := append([]any{pgx.QueryExecModeExec}, scopeArgs(q, s, true)...)
			rows, err := tx.Query(ctx, `SELECT 9, `+hitColumns+`, 0::float8 FROM sap_search_entries e WHERE `+scopeFilter+` AND e.embedding IS NOT NULL`, args...)
			if err != nil {
				return err
			}
			if candidates, err = collectHits(rows, s.connection); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	return keyword, candidates, nil
}

func scopeArgs(q Query, s scope, withEmbedding bool) []any {
	return []any{q.WorkspaceID.String(), s.connection.String(), s.generation, strings.ToLower(q.Category), q.Custom, q.Detail, withEmbedding, strings.ToUpper(q.ObjectType)}
}

// textCap bounds the entries a full-text part ranks; nameCap the names a pattern part takes
// (in name order: the first names of a prefix, shortest first among them).
const (
	textCap = 500
	nameCap = 200
)

// nameOrder is the order of the name index (text_pattern_ops: bytewise), so a prefix scan
// returns names in order and stops after nameCap instead of sorting every match.
const nameOrder = `e.object_name USING ~<~`

// Keyword stages, each one statement: names and full text; the fallbacks when no name matched
// (fuzzy name, full text of a name's parts); any-word full text.
const (
	stageMain = iota
	stageFallback
	stageWords
)

// keywordHits runs the keyword parts of a stage in one statement.
func keywordHits(ctx context.Context, tx pgx.Tx, q Query, s scope, semantic bool, stage int) ([]Hit, error) {
	fuzzy := stage == stageFallback
	args := scopeArgs(q, s, semantic)
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	var parts []string
	// part: the best `limit` of at most `inner` entries matching where, ranked by score.
	part := func(tier int, score, where, innerOrder string, inner, limit int) {
		if innerOrder != "" {
			innerOrder = "ORDER BY " + innerOrder
		}
		parts = append(parts, fmt.Sprintf(`(SELECT %d, %s, %s AS score FROM (SELECT e.* FROM sap_search_entries e WHERE %s AND %s %s LIMIT %d) e
			ORDER BY score DESC, e.object_name LIMIT %d)`, tier, hitColumns, score, scopeFilter, where, innerOrder, inner, limit))
	}
	text := q.Text
	isName := nameToken.MatchString(text)
	name := strings.ToUpper(text)
	switch {
	case fuzzy:
		if isName && !strings.ContainsAny(name, "*%") && len(name) >= 3 {
			n := arg(name)
			part(tierFuzzy, `similarity(e.object_name, `+n+`)::float8`, `e.object_name % `+n, "", textCap, perPart)
		}
	case stage == stageWords:
	case isName && strings.ContainsAny(name, "*%"):
		p := arg(likePattern(name))
		part(tierName, `1.0 / (1 + length(e.object_name))`, `e.object_name LIKE `+p, nameOrder, nameCap, perPart)
	case isName:
		n := arg(name)
		part(tierExact, `1.0::float8`, `e.object_name = `+n, "", perPart, perPart)
		p := arg(likeEscape(name) + "%")
		part(tierName, `1.0 / (1 + length(e.object_name))`, `e.object_name LIKE `+p+` AND e.object_name <> `+n, nameOrder, nameCap, perPart)
	}
	words := queryWords(text)
	// Full text: not for a pattern (a name search), and for a name with _ or digits only as the
	// fallback when no name matched (its parts are common words: costly and no better).
	fullText := len(words) > 0 && !strings.ContainsAny(text, "*%")
	if isName && strings.ContainsAny(text, "_0123456789") {
		fullText = fullText && stage == stageFallback
	} else {
		fullText = fullText && stage == stageMain
	}
	if fullText {
		// One word may be a name's part, which the index keeps unstemmed ('simple'); several
		// words are a description: English only, which halves the posting lists to read.
		t := arg(text)
		tq := `websearch_to_tsquery('english', ` + t + `)`
		if len(words) == 1 {
			tq = `(websearch_to_tsquery('english', ` + t + `) || websearch_to_tsquery('simple', ` + t + `))`
		}
		part(tierText, `ts_rank(e.search, `+tq+`)::float8`, `e.search @@ `+tq, "", textCap, perPart)
	}
	if stage == stageWords && len(words) > 1 && !strings.ContainsAny(text, "*%") && !(isName && strings.ContainsAny(text, "_0123456789")) {
		w := arg(strings.Join(words, " | "))
		oq := `to_tsquery('english', ` + w + `)`
		limit := perPart
		if semantic {
			limit = semanticWords // the candidates semantic ranking reorders
		}
		part(tierWords, `ts_rank(e.search, `+oq+`)::float8`, `e.search @@ `+oq, "", textCap, limit)
	}
	if len(parts) == 0 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, strings.Join(parts, "\nUNION ALL\n"), append([]any{pgx.QueryExecModeExec}, args...)...)
	if err != nil {
		return nil, err
	}
	return collectHits(rows, s.connection)
}

func collectHits(rows pgx.Rows, conn uuid.UUID) ([]Hit, error) {
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		h := Hit{ConnectionID: conn}
		if err := rows.Scan(&h.tier, &h.Type, &h.Name, &h.Category, &h.Custom, &h.Package, &h.Title, &h.ReleaseState, &h.Body, &h.embedding, &h.Score); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if h.tier < len(tierMatch) {
			h.Match = tierMatch[h.tier]
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return out, nil
}

func hitKey(h *Hit) string { return h.ConnectionID.String() + "\x00" + h.Type + "\x00" + h.Name }

// rankKeyword orders keyword hits by tier, then score, keeping each object once (its best tier).
func rankKeyword(hits []Hit) []Hit {
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].tier != hits[j].tier {
			return hits[i].tier < hits[j].tier
		}
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Name < hits[j].Name
	})
	seen := map[string]bool{}
	out := hits[:0]
	for _, h := range hits {
		k := hitKey(&h)
		if seen[k] {
			continue
		}
		seen[k] = true
		// A keyword score a reader can compare: higher tiers always above lower ones.
		h.Score = float64(len(tierMatch)-h.tier) + min(h.Score, 0.999)
		out = append(out, h)
	}
	return out
}

// rerank scores candidates by the cosine of their embedding with the query's, once each;
// candidates without an embedding are left out.
func rerank(cands []Hit, qvec []byte) []Hit {
	seen := map[string]bool{}
	var out []Hit
	for _, h := range cands {
		k := hitKey(&h)
		if seen[k] || h.embedding == nil {
			continue
		}
		seen[k] = true
		h.Score = Cosine(h.embedding, qvec)
		h.Match = "semantic"
		out = append(out, h)
	}
	return out
}

// fuse is reciprocal-rank fusion of the keyword and semantic rankings: each list contributes
// 1/(60+rank), so an object both find ranks above one either finds alone.
func fuse(keyword, semantic []Hit) []Hit {
	byKey := map[string]*Hit{}
	var order []string
	add := func(list []Hit) {
		for rank, h := range list {
			k := hitKey(&h)
			s := 1 / (rrfK + float64(rank+1))
			if prev, ok := byKey[k]; ok {
				prev.Score += s
				continue
			}
			h := h
			h.Score = s
			byKey[k] = &h
			order = append(order, k)
		}
	}
	add(keyword)
	add(semantic)
	out := make([]Hit, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// queryWords are the query's words for an any-word full-text query (letters and digits only,
// so they are safe inside to_tsquery).
func queryWords(text string) []string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 2 && len(words) < 16 {
			words = append(words, w)
		}
	}
	return words
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`).Replace(s)
}

// likePattern turns a name with * (or %) wildcards into a LIKE pattern; _ stays literal.
func likePattern(name string) string {
	return strings.NewReplacer(`\`, `\\`, `_`, `\_`, `*`, `%`).Replace(name)
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// Searcher searches one workspace's index: what the worker gives the SAP tools
// (saptools.Executor.Index). A nil Embedder means keyword search only.
type Searcher struct {
	Pool        *pgxpool.Pool
	WorkspaceID uuid.UUID
	Embedder    Embedder
}

// Search runs q in the searcher's workspace (q.WorkspaceID is ignored).
func (s Searcher) Search(ctx context.Context, q Query) (Result, error) {
	q.WorkspaceID = s.WorkspaceID
	return Search(ctx, s.Pool, q, s.Embedder)
}
