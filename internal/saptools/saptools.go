// Package saptools executes the SAP tools against a workspace's connections: it resolves the
// target connection, turns tool arguments into connector requests and shapes the answers for
// the model. Definitions, approval modes and offer rules live in internal/tools (pure), whose
// SAP tools run through tools.SAPExecutor, which Executor implements: one method per tool.
package saptools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/tools"
)

// Executor runs SAP tools for one tool call. Writes staged by execute_rfc share one SAP
// session per Executor, so a script's BAPI and its BAPI_TRANSACTION_COMMIT belong together.
type Executor struct {
	Conns   []sapconn.Conn
	Ledger  Ledger        // ETL runs (cross-connection tools)
	Index   IndexSearcher // the workspace's SAP index (sap_search_index); nil: live search only
	session string
}

// New builds an executor over the workspace's connections.
func New(conns []sapconn.Conn) *Executor {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Executor{Conns: conns, session: hex.EncodeToString(b)}
}

// sessionFor is the SAP session of the executor's execute_rfc calls. Under an idempotency key
// ("<agent>/<tool call>") it is derived from the key, so a retried tool call stages and commits in
// the session of its first attempt: its repeated requests match the first ones byte for byte and
// are answered from the connector's memory, and a commit that did not run yet commits what the
// first attempt staged.
func (e *Executor) sessionFor(ctx context.Context) string {
	if key := sap.IdempotencyKey(ctx); key != "" {
		sum := sha256.Sum256([]byte(key))
		return "k" + hex.EncodeToString(sum[:8])
	}
	return e.session
}

var _ tools.SAPExecutor = (*Executor)(nil)

// direct runs a single-connection tool on the connection the arguments name. Errors are
// sentences for the model (connector failures go through sap.Describe).
func (e *Executor) direct(tool string, args map[string]any, run func(api sap.Connector) (any, error)) (any, error) {
	conn, err := e.resolve(args)
	if err != nil {
		return nil, err
	}
	out, err := run(conn.API)
	if err != nil {
		var se *sap.Error
		if errors.As(err, &se) {
			return nil, errors.New(sap.Describe(err))
		}
		return nil, fmt.Errorf("%s on %s: %w", tool, conn.Name, err)
	}
	return out, nil
}

// resolve picks the connection: connection_id when given, the only one otherwise.
func (e *Executor) resolve(args map[string]any) (sapconn.Conn, error) {
	id, _ := args["connection_id"].(string)
	if len(e.Conns) == 0 {
		return sapconn.Conn{}, errors.New("this workspace has no SAP connection; an admin adds one under the workspace's connections")
	}
	if id == "" {
		if len(e.Conns) == 1 {
			return e.Conns[0], nil
		}
		return sapconn.Conn{}, fmt.Errorf("connection_id is required with several connections; choose one of: %s", e.describeConns())
	}
	for _, c := range e.Conns {
		if strings.EqualFold(c.ID, id) || strings.EqualFold(c.Name, id) {
			return c, nil
		}
	}
	return sapconn.Conn{}, fmt.Errorf("unknown connection_id %q; choose one of: %s", id, e.describeConns())
}

func (e *Executor) describeConns() string {
	parts := make([]string, len(e.Conns))
	for i, c := range e.Conns {
		parts[i] = fmt.Sprintf("%s (%s, %s)", c.ID, c.Name, c.SystemType)
	}
	return strings.Join(parts, ", ")
}

// GetSystemInfo runs sap_get_system_info.
func (e *Executor) GetSystemInfo(ctx context.Context, args map[string]any) (any, error) {
	return e.direct(tools.SAPGetSystemInfo, args, func(api sap.Connector) (any, error) {
		var info sap.SystemInfo
		err := api.Call(ctx, sap.EndpointSystemInfo, struct{}{}, &info)
		return info, err
	})
}

// GetTableSchema runs sap_get_table_schema.
func (e *Executor) GetTableSchema(ctx context.Context, args map[string]any) (any, error) {
	return e.direct(tools.SAPGetTableSchema, args, func(api sap.Connector) (any, error) {
		var schema sap.TableSchema
		err := api.Call(ctx, sap.EndpointTableSchema, sap.TableSchemaRequest{Table: upper(args, "table")}, &schema)
		return schema, err
	})
}

// ReadTable runs sap_read_table; the result is a ReadTableResult.
func (e *Executor) ReadTable(ctx context.Context, args map[string]any) (any, error) {
	return e.direct(tools.SAPReadTable, args, func(api sap.Connector) (any, error) {
		return e.readTable(ctx, api, args)
	})
}

// ExecuteRFC runs sap_execute_rfc in the executor's SAP session.
func (e *Executor) ExecuteRFC(ctx context.Context, args map[string]any) (any, error) {
	return e.direct(tools.SAPExecuteRFC, args, func(api sap.Connector) (any, error) {
		req := sap.ExecuteRFCRequest{Function: upper(args, "function"), Session: e.sessionFor(ctx)}
		req.Imports, _ = args["imports"].(map[string]any)
		if t, ok := args["tables"].(map[string]any); ok {
			req.Tables = map[string][]map[string]any{}
			for name, rows := range t {
				list, _ := rows.([]any)
				for _, r := range list {
					if m, ok := r.(map[string]any); ok {
						req.Tables[name] = append(req.Tables[name], m)
					}
				}
			}
		}
		req.TestRun, _ = args["test_run"].(bool)
		req.Commit, _ = args["commit"].(bool)
		var res sap.ExecuteRFCResponse
		err := api.Call(ctx, sap.EndpointExecuteRFC, req, &res)
		return res, err
	})
}

// GetFunctionInterface runs sap_get_function_interface.
func (e *Executor) GetFunctionInterface(ctx context.Context, args map[string]any) (any, error) {
	return e.direct(tools.SAPGetFunctionInterface, args, func(api sap.Connector) (any, error) {
		var fi sap.FunctionInterface
		err := api.Call(ctx, sap.EndpointFunctionInterface, sap.FunctionInterfaceRequest{Function: upper(args, "function")}, &fi)
		return fi, err
	})
}

// GetSource runs sap_get_source.
func (e *Executor) GetSource(ctx context.Context, args map[string]any) (any, error) {
	return e.direct(tools.SAPGetSource, args, func(api sap.Connector) (any, error) {
		var src sap.ABAPSource
		err := api.Call(ctx, sap.EndpointABAPSource, sap.ABAPSourceRequest{ObjectType: upper(args, "object_type"), Name: upper(args, "name")}, &src)
		return src, err
	})
}

// WhereUsed runs sap_where_used.
func (e *Executor) WhereUsed(ctx context.Context, args map[string]any) (any, error) {
	return e.direct(tools.SAPWhereUsed, args, func(api sap.Connector) (any, error) {
		var wu sap.WhereUsedResponse
		err := api.Call(ctx, sap.EndpointWhereUsed, sap.WhereUsedRequest{ObjectType: upper(args, "object_type"), Name: upper(args, "name"), Limit: intArg(args, "limit", 100)}, &wu)
		return wu, err
	})
}

// IndexSearcher searches the workspace's SAP index (sapindex.Searcher is one).
type IndexSearcher interface {
	Search(ctx context.Context, q sapindex.Query) (sapindex.Result, error)
}

// SearchIndexResult is sap_search_index's answer: from the index, or from a live search of the
// system when the connection has no index yet (Note says so).
type SearchIndexResult struct {
	Source  string        `json:"source"` // index | live
	Mode    string        `json:"mode,omitempty"`
	Objects []IndexObject `json:"objects"`
	Note    string        `json:"note,omitempty"`
}

// IndexObject is one object sap_search_index found.
type IndexObject struct {
	Type         string  `json:"type"`
	Name         string  `json:"name"`
	Category     string  `json:"category"`
	Description  string  `json:"description"`
	Package      string  `json:"package"`
	Custom       bool    `json:"custom"`
	ReleaseState string  `json:"release_state,omitempty"`
	Score        float64 `json:"score,omitempty"`
	Body         string  `json:"body,omitempty"`
}

// SearchIndex runs sap_search_index: it reads the connection's index and falls back to the
// live search_objects, with a note, when there is none yet (or no index is wired in).
func (e *Executor) SearchIndex(ctx context.Context, args map[string]any) (any, error) {
	conn, err := e.resolve(args)
	if err != nil {
		return nil, err
	}
	customOnly, _ := args["custom_only"].(bool)
	note := ""
	if e.Index != nil {
		if id, perr := uuid.Parse(conn.ID); perr == nil {
			detail, _ := args["detail"].(bool)
			q := sapindex.Query{ConnectionIDs: []uuid.UUID{id}, Text: str(args, "query"), Category: str(args, "category"),
				ObjectType: upper(args, "object_type"), Mode: str(args, "mode"), Limit: intArg(args, "limit", 50), Detail: detail}
			if customOnly {
				q.Custom = &customOnly
			}
			res, err := e.Index.Search(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("%s on %s: %w", tools.SAPSearchIndex, conn.Name, err)
			}
			if len(res.NotIndexed) == 0 {
				out := SearchIndexResult{Source: "index", Mode: res.Mode, Objects: make([]IndexObject, len(res.Hits)), Note: res.Note}
				for i, h := range res.Hits {
					out.Objects[i] = IndexObject{Type: h.Type, Name: h.Name, Category: h.Category, Description: h.Title, Package: h.Package,
						Custom: h.Custom, ReleaseState: h.ReleaseState, Score: math.Round(h.Score*10000) / 10000, Body: h.Body}
				}
				return out, nil
			}
		}
		note = conn.Name + " has no index yet (no landscape sync has finished): these results come from a live search of the system by name and description"
	}
	return e.direct(tools.SAPSearchIndex, args, func(api sap.Connector) (any, error) {
		var res sap.SearchObjectsResponse
		err := api.Call(ctx, sap.EndpointSearchObjects, sap.SearchObjectsRequest{Query: str(args, "query"), ObjectType: upper(args, "object_type"),
			CustomOnly: customOnly, Limit: intArg(args, "limit", 50)}, &res)
		out := SearchIndexResult{Source: "live", Objects: make([]IndexObject, 0, len(res.Objects)), Note: note}
		for _, o := range res.Objects {
			out.Objects = append(out.Objects, IndexObject{Type: o.Type, Name: o.Name, Category: sapindex.Category(o.Type, o.Name),
				Description: o.Description, Package: o.Package, Custom: o.Custom})
		}
		return out, err
	})
}

// ListCustomObjects runs sap_list_custom_objects.
func (e *Executor) ListCustomObjects(ctx context.Context, args map[string]any) (any, error) {
	return e.direct(tools.SAPListCustomObjects, args, func(api sap.Connector) (any, error) {
		q := str(args, "query")
		if q == "" {
			q = "*"
		}
		var res sap.SearchObjectsResponse
		err := api.Call(ctx, sap.EndpointSearchObjects, sap.SearchObjectsRequest{Query: q, ObjectType: upper(args, "object_type"),
			CustomOnly: true, Limit: intArg(args, "limit", 200)}, &res)
		return res, err
	})
}

// ReadTableResult is sap_read_table's answer. It is written as rows of objects (models and
// scripts read those more reliably than positional arrays) but kept as arrays in between.
type ReadTableResult struct {
	Table    string
	Fields   []string
	Values   [][]string // one entry per row, in the order of Fields
	RowCount int
}

// Rows returns the rows as field → value maps.
func (r ReadTableResult) Rows() []map[string]string {
	out := make([]map[string]string, len(r.Values))
	for i, row := range r.Values {
		m := make(map[string]string, len(row))
		for j, v := range row {
			if j < len(r.Fields) {
				m[r.Fields[j]] = v
			}
		}
		out[i] = m
	}
	return out
}

// MarshalJSON writes each row's fields in the table's order (a map would sort them, and
// encoding a map per row is the most expensive part of answering a large read).
func (r ReadTableResult) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 64+len(r.Values)*len(r.Fields)*24)
	b = append(b, `{"table":`...)
	b = appendJSONString(b, r.Table)
	b = append(b, `,"fields":[`...)
	for i, f := range r.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f)
	}
	b = append(b, `],"rows":[`...)
	for i, row := range r.Values {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for j, f := range r.Fields {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, f)
			b = append(b, ':')
			v := ""
			if j < len(row) {
				v = row[j]
			}
			b = appendJSONString(b, v)
		}
		b = append(b, '}')
	}
	b = append(b, `],"row_count":`...)
	b = strconv.AppendInt(b, int64(r.RowCount), 10)
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string; plain ASCII (nearly all SAP data) is copied
// as is, anything else goes through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s)
			return append(b, raw...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func (e *Executor) readTable(ctx context.Context, api sap.Connector, args map[string]any) (ReadTableResult, error) {
	req := sap.ReadTableRequest{Table: upper(args, "table"), RowSkip: intArg(args, "row_skip", 0), RowCount: intArg(args, "row_count", 100)}
	if list, ok := args["fields"].([]any); ok {
		for _, f := range list {
			if s, ok := f.(string); ok {
				req.Fields = append(req.Fields, strings.ToUpper(s))
			}
		}
	}
	req.Options = WhereLines(str(args, "where"))
	var res sap.ReadTableResponse
	if err := api.Call(ctx, sap.EndpointReadTable, req, &res); err != nil {
		return ReadTableResult{}, err
	}
	return shapeRows(req.Table, res), nil
}

func shapeRows(table string, res sap.ReadTableResponse) ReadTableResult {
	out := ReadTableResult{Table: table, Fields: make([]string, len(res.Fields)), Values: res.Rows, RowCount: len(res.Rows)}
	for i, f := range res.Fields {
		out.Fields[i] = f.Name
	}
	if out.Values == nil {
		out.Values = [][]string{}
	}
	return out
}

// WhereLines splits a WHERE condition into RFC_READ_TABLE OPTIONS lines of at most 72
// characters, breaking only between words outside quotes.
func WhereLines(where string) []string {
	where = strings.TrimSpace(where)
	if where == "" {
		return nil
	}
	const width = 72
	var lines []string
	var cur strings.Builder
	inQuote := false
	word := strings.Builder{}
	flush := func() {
		w := word.String()
		word.Reset()
		if w == "" {
			return
		}
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	for _, r := range where {
		if r == '\'' {
			inQuote = !inQuote
		}
		if r == ' ' && !inQuote {
			flush()
			continue
		}
		word.WriteRune(r)
	}
	flush()
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

func str(args map[string]any, key string) string {
	s, _ := args[key].(string)
	return strings.TrimSpace(s)
}

func upper(args map[string]any, key string) string { return strings.ToUpper(str(args, key)) }

// intArg reads an integer argument however it was decoded (json.Number from the schema
// validator, int64/float64 from scripts).
func intArg(args map[string]any, key string, def int) int {
	switch v := args[key].(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n)
		}
	case int64:
		return int(v)
	case int:
		return v
	case float64:
		return int(v)
	case string:
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}
