package sapbackend

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// The index phases read SAP's own tables through RFC_READ_TABLE (docs/connector.md): each phase
// is a list of sections (a table, its fields and a WHERE), paged with ROWSKIPS/ROWCOUNT; every
// row becomes zero or more items. A cursor names the section, the rows consumed, the key of the
// row it stopped in and how many of that row's items were served, so a page reads O(limit)
// rows. On resume the row at the cursor is checked against the key: when the table moved
// (rows inserted or deleted before it), the row is looked for nearby and the walk resumes after
// it. A delta (after_seq > 0) walks the same sections restricted to the objects the connector's
// change log names after after_seq, in chunks of names.

const (
	defaultPageLimit = 200
	maxPageLimit     = 1000
	deltaChunk       = 100 // object names per IN list of a delta
	// lookupChunk: names per IN list of a page's look-ups (texts, packages, programs). Each
	// RFC_READ_TABLE is a round trip; the kernel's Open SQL splits long IN lists for the
	// database itself (rsdb/max_in_blocking_factor), so a page's names go in one or two.
	lookupChunk    = 500
	relocateWindow = 100 // rows looked at around a cursor whose row moved
)

// section is one table an index phase walks.
type section struct {
	table  string
	fields []string
	where  string
	// name is the field naming the object (a delta filters on it); key identifies a row.
	name string
	key  func(r soaprfc.Struct) string
	// build turns a batch of rows into each row's items (nil: none).
	build func(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error)
	// batch is how many rows one read asks for, given the page's limit.
	batch func(limit int) int
}

// phase is an index phase's walk.
type phase struct {
	endpoint string
	sections []section
	// countable: one item per row, so the first page counts the rows for total.
	countable bool
	// deltaNames picks the changed objects a delta of this phase looks at.
	deltaNames func(c sap.Change) (string, bool)
}

// cursor is a position in a phase's walk, opaque to the caller.
type cursor struct {
	Phase  string `json:"p"`
	After  int64  `json:"a,omitempty"`
	Chunk  int    `json:"c,omitempty"` // delta: the chunk of changed names
	Sec    int    `json:"s"`
	Skip   int    `json:"k"`           // rows of the section consumed before the row Key
	Key    string `json:"n,omitempty"` // the row the walk stopped in
	Sub    int    `json:"u,omitempty"` // items of that row already served
	Total  int    `json:"t"`
	Served int    `json:"d"` // items served before this page
}

func (c cursor) encode() string {
	raw, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(append([]byte(fmt.Sprintf("%08x", crc32.ChecksumIEEE(raw))), raw...))
}

// decodeCursor accepts only cursors this phase handed out for the same after_seq.
func decodeCursor(s, endpoint string, after int64) (cursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) < 9 || fmt.Sprintf("%08x", crc32.ChecksumIEEE(raw[8:])) != string(raw[:8]) {
		return cursor{}, false
	}
	var c cursor
	if json.Unmarshal(raw[8:], &c) != nil || c.Phase != endpoint || c.After != after || c.Sec < 0 || c.Skip < 0 || c.Sub < 0 || c.Chunk < 0 {
		return cursor{}, false
	}
	return c, true
}

// isCustom says whether an object is the customer's: Z*, Y*, a customer namespace, or in a
// customer or local package (Z*, Y*, $*).
func (b *Backend) isCustom(name, pkg string) bool {
	n, p := strings.ToUpper(name), strings.ToUpper(pkg)
	if strings.HasPrefix(n, "Z") || strings.HasPrefix(n, "Y") || strings.HasPrefix(p, "Z") || strings.HasPrefix(p, "Y") || strings.HasPrefix(p, "$") {
		return true
	}
	for _, ns := range b.sys.CustomerNamespaces {
		if strings.HasPrefix(n, ns) || strings.HasPrefix(p, ns) {
			return true
		}
	}
	return false
}

// customWhere is the WHERE that admits customer names (and packages, when pkgField is set).
func (b *Backend) customWhere(nameField, pkgField string) string {
	var or []string
	for _, p := range append([]string{"Z", "Y"}, b.sys.CustomerNamespaces...) {
		or = append(or, nameField+" LIKE "+soaprfc.QuoteLiteral(p+"%"))
	}
	if pkgField != "" {
		for _, p := range []string{"Z", "Y", "$"} {
			or = append(or, pkgField+" LIKE "+soaprfc.QuoteLiteral(p+"%"))
		}
	}
	return "( " + strings.Join(or, " OR ") + " )"
}

func inList(field string, names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = soaprfc.QuoteLiteral(n)
	}
	return field + " IN ( " + strings.Join(q, ", ") + " )"
}

func and(conds ...string) string {
	var out []string
	for _, c := range conds {
		if strings.TrimSpace(c) != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, " AND ")
}

func trimmed(r soaprfc.Struct, f string) string { return strings.TrimSpace(r[f]) }

// read is one RFC_READ_TABLE page.
func read(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, table string, fields []string, where string, skip, count int) ([]soaprfc.Struct, error) {
	var rows []soaprfc.Struct
	_, err := c.ReadTable(ctx, rfcCred(cred), soaprfc.ReadTableRequest{Table: table, Fields: fields, Where: where, RowSkip: skip, RowCount: count},
		func(r soaprfc.Struct) error { rows = append(rows, r); return nil })
	return rows, protoErr(err)
}

// lookup reads the rows whose field is one of names, in chunks, each in one call (a few rows
// per name).
func lookup(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, table string, fields []string, field string, names []string, where string) ([]soaprfc.Struct, error) {
	names = uniq(names)
	var out []soaprfc.Struct
	for start := 0; start < len(names); start += lookupChunk {
		_, err := c.ReadTable(ctx, rfcCred(cred), soaprfc.ReadTableRequest{Table: table, Fields: fields, Small: true,
			Where: and(inList(field, names[start:min(len(names), start+lookupChunk)]), where)},
			func(r soaprfc.Struct) error { out = append(out, r); return nil })
		if err != nil {
			return nil, protoErr(err)
		}
	}
	return out, nil
}

func uniq(xs []string) []string {
	seen := make(map[string]bool, len(xs))
	out := xs[:0:0]
	for _, x := range xs {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// readIndexPage reads one page of a phase from SAP.
func (b *Backend) readIndexPage(ctx context.Context, cred connector.Credentials, ph *phase, req sap.IndexRequest) (*sap.IndexPage, error) {
	c, err := b.soap(ph.endpoint)
	if err != nil {
		return nil, err
	}
	if req.AfterSeq < 0 {
		return nil, badRequest("after_seq must not be negative")
	}
	limit := req.Limit
	if limit <= 0 {
		limit = defaultPageLimit
	}
	limit = min(limit, maxPageLimit)
	cur := cursor{Phase: ph.endpoint, After: req.AfterSeq}
	if req.Cursor != "" {
		var ok bool
		if cur, ok = decodeCursor(req.Cursor, ph.endpoint, req.AfterSeq); !ok {
			return nil, badRequest("invalid cursor for %s: send back a next_cursor this phase handed out, unchanged", ph.endpoint)
		}
	}
	var chunks [][]string // a delta's changed object names
	if req.AfterSeq > 0 {
		if _, err := b.pollChanges(ctx, c, cred); err != nil {
			return nil, err
		}
		chunks = b.deltaChunks(ph, req.AfterSeq)
	}
	if req.Cursor == "" && ph.countable {
		if cur.Total, err = b.countRows(ctx, c, cred, ph, chunks); err != nil {
			return nil, err
		}
	}
	page := &sap.IndexPage{Items: make([]map[string]any, 0, min(limit, 64))}
	next, err := b.walk(ctx, c, cred, ph, chunks, cur, limit, page)
	if err != nil {
		return nil, err
	}
	served := cur.Served + len(page.Items)
	page.Total = max(cur.Total, served)
	if next != nil {
		next.Served, next.Total = served, cur.Total
		page.NextCursor = next.encode()
		if !ph.countable {
			page.Total = served + 1 // a lower bound: more items follow
		}
	}
	return page, nil
}

// sectionWhere is a section's WHERE, narrowed to a delta's chunk of names.
func sectionWhere(sec section, chunks [][]string, chunk int) string {
	if chunks == nil {
		return sec.where
	}
	return and(sec.where, inList(sec.name, chunks[chunk]))
}

// countRows counts a countable phase's rows by reading their key fields only.
func (b *Backend) countRows(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, ph *phase, chunks [][]string) (int, error) {
	n := 0
	nChunks := 1
	if chunks != nil {
		nChunks = len(chunks)
	}
	for ch := 0; ch < nChunks; ch++ {
		for _, sec := range ph.sections {
			info, err := c.ReadTable(ctx, rfcCred(cred), soaprfc.ReadTableRequest{Table: sec.table, Fields: []string{sec.name}, Where: sectionWhere(sec, chunks, ch)},
				func(soaprfc.Struct) error { return nil })
			if err != nil {
				return 0, protoErr(err)
			}
			n += info.Rows
		}
	}
	return n, nil
}

// walk fills page from cur on; it returns the cursor of the next page (nil: the phase is done).
func (b *Backend) walk(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, ph *phase, chunks [][]string, cur cursor, limit int, page *sap.IndexPage) (*cursor, error) {
	nChunks := 1
	if chunks != nil {
		nChunks = len(chunks)
	}
	for cur.Chunk < nChunks {
		if chunks != nil && len(chunks[cur.Chunk]) == 0 {
			cur.Chunk++
			continue
		}
		for cur.Sec < len(ph.sections) {
			sec := ph.sections[cur.Sec]
			where := sectionWhere(sec, chunks, cur.Chunk)
			batch := limit
			if sec.batch != nil {
				batch = max(1, sec.batch(limit))
			}
			rows, err := read(ctx, c, cred, sec.table, sec.fields, where, cur.Skip, batch)
			if err != nil {
				return nil, err
			}
			if cur.Key != "" && (len(rows) == 0 || sec.key(rows[0]) != cur.Key) {
				if rows, err = b.relocate(ctx, c, cred, sec, where, &cur, batch); err != nil {
					return nil, err
				}
			}
			items, err := sec.build(ctx, c, cred, rows)
			if err != nil {
				return nil, err
			}
			for i, row := range rows {
				start := 0
				if i == 0 && cur.Key != "" && sec.key(row) == cur.Key {
					start = cur.Sub
				}
				for k := start; k < len(items[i]); k++ {
					if len(page.Items) == limit {
						return &cursor{Phase: cur.Phase, After: cur.After, Chunk: cur.Chunk, Sec: cur.Sec, Skip: cur.Skip + i, Key: sec.key(row), Sub: k}, nil
					}
					page.Items = append(page.Items, items[i][k])
				}
			}
			cur.Key, cur.Sub = "", 0
			if len(rows) < batch {
				cur.Sec, cur.Skip = cur.Sec+1, 0
				continue
			}
			cur.Skip += len(rows)
		}
		cur.Chunk, cur.Sec, cur.Skip = cur.Chunk+1, 0, 0
	}
	return nil, nil
}

// relocate finds the cursor's row near its old place after the table moved, and returns the
// rows from it on. A row gone for good (deleted) resumes at the old place without it.
func (b *Backend) relocate(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, sec section, where string, cur *cursor, batch int) ([]soaprfc.Struct, error) {
	from := max(0, cur.Skip-relocateWindow)
	window, err := read(ctx, c, cred, sec.table, sec.fields, where, from, 2*relocateWindow+batch)
	if err != nil {
		return nil, err
	}
	for i, r := range window {
		if sec.key(r) == cur.Key {
			cur.Skip = from + i
			return window[i:min(len(window), i+batch)], nil
		}
	}
	cur.Key, cur.Sub = "", 0
	if cur.Skip-from >= len(window) {
		return nil, nil
	}
	return window[cur.Skip-from : min(len(window), cur.Skip-from+batch)], nil
}

// deltaChunks are the object names of the changes after seq this phase looks at, latest
// change per object, deleted objects left out, in chunks for IN lists.
func (b *Backend) deltaChunks(ph *phase, after int64) [][]string {
	changes, _ := b.changes.After(after, 0)
	latest := map[string]sap.Change{}
	var order []string
	for _, ch := range changes {
		k := ch.ObjectType + "/" + ch.ObjectName
		if _, ok := latest[k]; !ok {
			order = append(order, k)
		}
		latest[k] = ch
	}
	var names []string
	for _, k := range order {
		ch := latest[k]
		if ch.ChangeType == "deleted" || ch.ObjectType == "DATA" {
			continue
		}
		if n, ok := ph.deltaNames(ch); ok {
			names = append(names, n)
		}
	}
	names = uniq(names)
	chunks := [][]string{}
	for start := 0; start < len(names); start += deltaChunk {
		chunks = append(chunks, names[start:min(len(names), start+deltaChunk)])
	}
	return chunks
}

// --- the phases ---

func (b *Backend) IndexCustomObjects(ctx context.Context, cred connector.Credentials, req sap.IndexRequest) (*sap.IndexPage, error) {
	return b.indexPage(ctx, cred, b.objectPhase(sap.EndpointIndexCustomObjects, nil, true, b.customObjectItems), req)
}

func (b *Backend) IndexCustomCode(ctx context.Context, cred connector.Credentials, req sap.IndexRequest) (*sap.IndexPage, error) {
	if _, err := b.adtClient(sap.EndpointABAPSource); err != nil {
		return nil, connector.NotSupported("index/custom_code reads sources through ADT, which does not serve system %s: %s", b.sys.ID, err.Error())
	}
	return b.indexPage(ctx, cred, b.objectPhase(sap.EndpointIndexCustomCode, sourceTypes, false, b.customCodeItems), req)
}

func (b *Backend) IndexRelationships(ctx context.Context, cred connector.Credentials, req sap.IndexRequest) (*sap.IndexPage, error) {
	return b.indexPage(ctx, cred, b.objectPhase(sap.EndpointIndexRelationships, relationTypes, false, b.relationshipItems), req)
}

// sourceTypes are the TADIR types whose source ADT serves (PROG covers includes).
var sourceTypes = []string{"PROG", "CLAS", "INTF", "DDLS"}

// relationTypes also have relationships without source: enhancement implementations, appends.
var relationTypes = []string{"PROG", "CLAS", "INTF", "DDLS", "ENHO", "TABL"}

// objectPhase walks the custom objects: TADIR (of types; nil: all) and the custom function
// modules of TFDIR (function modules have no TADIR entry of their own).
func (b *Backend) objectPhase(endpoint string, types []string, countable bool, items objectItems) *phase {
	tadirWhere := and("PGMID = 'R3TR'", b.customWhere("OBJ_NAME", "DEVCLASS"))
	if types != nil {
		tadirWhere = and(tadirWhere, inList("OBJECT", types))
	} else {
		tadirWhere = and(tadirWhere, "OBJECT <> 'DEVC'")
	}
	batch := func(limit int) int { return limit }
	if endpoint == sap.EndpointIndexRelationships {
		batch = func(limit int) int { return max(1, limit/10) } // many items per object
	}
	return &phase{endpoint: endpoint, countable: countable,
		sections: []section{
			{table: "TADIR", fields: []string{"OBJECT", "OBJ_NAME", "DEVCLASS", "AUTHOR", "CREATED_ON"}, where: tadirWhere, name: "OBJ_NAME", batch: batch,
				key: func(r soaprfc.Struct) string { return trimmed(r, "OBJECT") + "/" + trimmed(r, "OBJ_NAME") },
				build: func(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error) {
					refs := make([]objRef, len(rows))
					for i, r := range rows {
						refs[i] = objRef{typ: trimmed(r, "OBJECT"), name: trimmed(r, "OBJ_NAME"), pkg: trimmed(r, "DEVCLASS"), author: trimmed(r, "AUTHOR"), created: trimmed(r, "CREATED_ON")}
						if !b.isCustom(refs[i].name, refs[i].pkg) {
							refs[i].skip = true // the LIKE admitted more than a customer name ('_' is a wildcard)
						}
					}
					return items(ctx, c, cred, refs)
				}},
			{table: "TFDIR", fields: []string{"FUNCNAME", "PNAME", "INCLUDE"}, where: b.customWhere("FUNCNAME", ""), name: "FUNCNAME", batch: batch,
				key: func(r soaprfc.Struct) string { return trimmed(r, "FUNCNAME") },
				build: func(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error) {
					refs := make([]objRef, len(rows))
					for i, r := range rows {
						refs[i] = objRef{typ: "FUNC", name: trimmed(r, "FUNCNAME"), group: groupOfProgram(r["PNAME"]), include: trimmed(r, "INCLUDE")}
						refs[i].skip = !b.isCustom(refs[i].name, "")
					}
					return items(ctx, c, cred, refs)
				}},
		},
		// Any changed object: the sections' WHERE keeps the customer's (a customer package
		// makes an object custom whatever its name).
		deltaNames: func(ch sap.Change) (string, bool) { return ch.ObjectName, true }}
}

// objectItems builds each object's items.
type objectItems func(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, refs []objRef) ([][]map[string]any, error)

// objRef is an object a page builds items for.
type objRef struct {
	typ, name, pkg, author, created string
	group, include                  string // FUNC: function group and include number (TFDIR)
	skip                            bool   // not the customer's after all
}

// program is the ABAP program holding an object's code (REPOSRC-PROGNAME).
func (o objRef) program() string {
	switch o.typ {
	case "PROG", "INCL":
		return o.name
	case "CLAS":
		return sap.PoolInclude(o.name, "CP")
	case "INTF":
		return sap.PoolInclude(o.name, "IP")
	case "FUGR":
		ns, short := splitNamespace(o.name)
		return ns + "SAPL" + short
	case "FUNC":
		if o.group == "" || o.include == "" {
			return ""
		}
		ns, short := splitNamespace(o.group)
		return ns + "L" + short + "U" + o.include
	}
	return ""
}

// sapDate turns DATS 20210315 into 2021-03-15 ("" for an initial date).
func sapDate(d string) string {
	d = strings.TrimSpace(d)
	if len(d) != 8 || d == "00000000" {
		return ""
	}
	return d[:4] + "-" + d[4:6] + "-" + d[6:]
}
