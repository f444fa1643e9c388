package soaprfc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sapagent/sapagent/internal/sap"
)

// MaxRowWidth is RFC_READ_TABLE's DATA-WA width: a field list wider than this raises
// DATA_BUFFER_EXCEEDED.
const MaxRowWidth = 512

// DefaultPageSize is the ROWCOUNT of one RFC_READ_TABLE call while paging.
const DefaultPageSize = 5000

// ReadTableRequest is one read of a table through RFC_READ_TABLE.
type ReadTableRequest struct {
	Table  string
	Fields []string // empty: all fields (from DDIF_FIELDINFO_GET when a split is needed)
	Where  string   // ABAP WHERE condition; split into 72-character OPTIONS lines
	// Keys are equality conditions on fields, ANDed to Where. A field whose domain has the
	// ALPHA conversion exit gets its value converted (leading zeros) before the query.
	Keys     map[string]string
	RowSkip  int
	RowCount int // 0: all rows
	PageSize int // 0: DefaultPageSize
	// Small: the answer is a few rows (a look-up by key). It is read in one call and cut by
	// the FIELDS of that same answer (SAP sends them after DATA, so a streamed read must ask
	// for them first): half the round trips, the rows held in memory once.
	Small bool
}

// Column is one field of the answer with its place in the fixed-width DATA-WA line.
type Column struct {
	Name   string
	Offset int
	Length int
	Type   string
	Text   string
}

// ReadTableInfo describes a finished read.
type ReadTableInfo struct {
	Columns []Column
	Rows    int
	Calls   int // RFC_READ_TABLE calls made (pages × chunks, plus metadata calls)
	Chunks  int // 1, or the number of field chunks after DATA_BUFFER_EXCEEDED
}

// ReadTable reads rows and hands each to emit (field → value, trailing blanks removed) in SAP's
// order. It sends no DELIMITER and cuts DATA-WA at FIELDS' OFFSET/LENGTH, so no value can clash
// with a separator. Paging uses ROWSKIPS/ROWCOUNT; rows are stream-parsed, memory stays flat.
// A field list wider than 512 characters is read in chunks that each repeat the key fields and
// are joined on the key page by page.
func (c *Client) ReadTable(ctx context.Context, cred Credentials, req ReadTableRequest, emit func(Struct) error) (*ReadTableInfo, error) {
	table := strings.ToUpper(strings.TrimSpace(req.Table))
	if !abapName.MatchString(table) {
		return nil, badRequest(fmt.Sprintf("invalid table name %q", req.Table))
	}
	fields := upper(req.Fields)
	var info []FieldInfo // read lazily: only keys and splits need it
	where := req.Where
	if len(req.Keys) > 0 {
		var err error
		if info, err = c.FieldInfo(ctx, cred, table, ""); err != nil {
			return nil, err
		}
		if where, err = keyWhere(info, req.Keys, where); err != nil {
			return nil, err
		}
	}
	opts, err := SplitOptions(where)
	if err != nil {
		return nil, err
	}
	out := &ReadTableInfo{Chunks: 1}
	if req.Small {
		res, err := c.Call(ctx, cred, "RFC_READ_TABLE", readParams(table, fields, opts, req.RowSkip, req.RowCount, false))
		out.Calls++
		switch {
		case err == nil:
			if out.Columns, err = columnsOf(res, table); err != nil {
				return nil, err
			}
			for _, row := range res.Table("DATA") {
				out.Rows++
				if err := emit(cutLine(row["WA"], out.Columns)); err != nil {
					return out, err
				}
			}
			return out, nil
		case !isException(err, "DATA_BUFFER_EXCEEDED"):
			return nil, err
		}
		// Too wide for one line: the chunked read below splits the field list.
	}
	cols, err := c.readMeta(ctx, cred, table, fields, opts)
	out.Calls++
	var chunks [][]Column
	var keys []string
	switch {
	case err == nil:
		chunks = [][]Column{cols}
	case isException(err, "DATA_BUFFER_EXCEEDED"):
		if info == nil {
			if info, err = c.FieldInfo(ctx, cred, table, ""); err != nil {
				return nil, err
			}
		}
		plan, k, err := splitFields(info, fields)
		if err != nil {
			return nil, err
		}
		keys = k
		for _, fs := range plan {
			cs, err := c.readMeta(ctx, cred, table, fs, opts)
			out.Calls++
			if err != nil {
				return nil, err
			}
			chunks = append(chunks, cs)
		}
		out.Chunks = len(chunks)
	default:
		return nil, err
	}
	out.Columns = mergeColumns(chunks)

	pageSize := req.PageSize
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	skip, left := req.RowSkip, req.RowCount
	for {
		n := pageSize
		if req.RowCount > 0 && left < n {
			n = left
		}
		if n <= 0 {
			return out, nil
		}
		got, calls, err := c.readPage(ctx, cred, table, chunks, keys, opts, skip, n, emit)
		out.Calls += calls
		out.Rows += got
		if err != nil {
			return out, err
		}
		if got < n {
			return out, nil
		}
		skip += got
		left -= got
	}
}

func upper(fs []string) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		if f = strings.ToUpper(strings.TrimSpace(f)); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func isException(err error, exc string) bool {
	var e *Error
	return errors.As(err, &e) && e.Exception == exc
}

// keyWhere adds FIELD = 'value' for each key input, ALPHA-converted where the field says so.
func keyWhere(info []FieldInfo, keys map[string]string, where string) (string, error) {
	byName := map[string]FieldInfo{}
	for _, f := range info {
		byName[f.Name] = f
	}
	var conds []string
	for _, k := range sortedKeys(keys) {
		name := strings.ToUpper(k)
		f, ok := byName[name]
		if !ok {
			return "", badRequest(fmt.Sprintf("field %s is not a field of the table", name))
		}
		v := keys[k]
		if f.ConvExit == "ALPHA" {
			v = AlphaInput(v, f.Length)
		}
		conds = append(conds, name+" = "+QuoteLiteral(v))
	}
	if strings.TrimSpace(where) != "" {
		conds = append(conds, "( "+where+" )")
	}
	return strings.Join(conds, " AND "), nil
}

// readMeta asks RFC_READ_TABLE for the field layout only (NO_DATA = 'X').
func (c *Client) readMeta(ctx context.Context, cred Credentials, table string, fields, opts []string) ([]Column, error) {
	res, err := c.Call(ctx, cred, "RFC_READ_TABLE", readParams(table, fields, opts, 0, 0, true))
	if err != nil {
		return nil, err
	}
	return columnsOf(res, table)
}

// columnsOf is the field layout of an RFC_READ_TABLE answer (its FIELDS).
func columnsOf(res *Result, table string) ([]Column, error) {
	var cols []Column
	for _, r := range res.Table("FIELDS") {
		cols = append(cols, Column{
			Name:   strings.TrimSpace(r["FIELDNAME"]),
			Offset: atoi(r["OFFSET"]),
			Length: atoi(r["LENGTH"]),
			Type:   strings.TrimSpace(r["TYPE"]),
			Text:   strings.TrimSpace(r["FIELDTEXT"]),
		})
	}
	if len(cols) == 0 {
		return nil, newErr(sap.ErrSAPException, 422, "", "RFC_READ_TABLE answered no FIELDS for "+table)
	}
	return cols, nil
}

func readParams(table string, fields, opts []string, skip, count int, noData bool) Params {
	imp := map[string]any{"QUERY_TABLE": table, "DELIMITER": ""}
	if noData {
		imp["NO_DATA"] = "X"
	} else {
		imp["ROWSKIPS"] = strconv.Itoa(skip)
		imp["ROWCOUNT"] = strconv.Itoa(count)
	}
	p := Params{Imports: imp, Tables: map[string][]Struct{"DATA": nil}}
	for _, f := range fields {
		p.Tables["FIELDS"] = append(p.Tables["FIELDS"], Struct{"FIELDNAME": f})
	}
	if _, ok := p.Tables["FIELDS"]; !ok {
		p.Tables["FIELDS"] = nil
	}
	for _, o := range opts {
		p.Tables["OPTIONS"] = append(p.Tables["OPTIONS"], Struct{"TEXT": o})
	}
	if _, ok := p.Tables["OPTIONS"]; !ok {
		p.Tables["OPTIONS"] = nil
	}
	return p
}

// readPage reads rows skip..skip+n of every chunk and emits them joined.
func (c *Client) readPage(ctx context.Context, cred Credentials, table string, chunks [][]Column, keys, opts []string, skip, n int, emit func(Struct) error) (int, int, error) {
	names := func(cs []Column) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.Name
		}
		return out
	}
	if len(chunks) == 1 {
		got := 0
		_, err := c.CallStream(ctx, cred, "RFC_READ_TABLE", readParams(table, names(chunks[0]), opts, skip, n, false), []string{"DATA"},
			func(_ string, row Struct) error {
				got++
				return emit(cutLine(row["WA"], chunks[0]))
			})
		return got, 1, err
	}
	// Several chunks: the first chunk's rows are kept for this page only, then completed.
	var rows []Struct
	index := map[string]int{}
	for ci, cs := range chunks {
		seen := 0
		_, err := c.CallStream(ctx, cred, "RFC_READ_TABLE", readParams(table, names(cs), opts, skip, n, false), []string{"DATA"},
			func(_ string, row Struct) error {
				vals := cutLine(row["WA"], cs)
				k := keyOf(vals, keys)
				if ci == 0 {
					index[k] = len(rows)
					rows = append(rows, vals)
					return nil
				}
				i, ok := index[k]
				if !ok {
					return newErr(sap.ErrSAPException, 422, "", "field chunks of "+table+" do not line up on the key (table changed while reading?)")
				}
				seen++
				for f, v := range vals {
					rows[i][f] = v
				}
				return nil
			})
		if err != nil {
			return 0, ci + 1, err
		}
		if ci > 0 && seen != len(rows) {
			return 0, ci + 1, newErr(sap.ErrSAPException, 422, "", "field chunks of "+table+" returned different row counts")
		}
	}
	for _, r := range rows {
		if err := emit(r); err != nil {
			return 0, len(chunks), err
		}
	}
	return len(rows), len(chunks), nil
}

func keyOf(vals Struct, keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(vals[k])
		b.WriteByte(0)
	}
	return b.String()
}

// cutLine splits a fixed-width DATA-WA line at the columns' OFFSET/LENGTH (characters).
// SAP drops trailing blanks of the line, so a short line means blank trailing fields.
func cutLine(wa string, cols []Column) Struct {
	row := make(Struct, len(cols))
	ascii := true
	for i := 0; i < len(wa); i++ {
		if wa[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for _, c := range cols {
			row[c.Name] = field(wa, c.Offset, c.Length)
		}
		return row
	}
	r := []rune(wa)
	for _, c := range cols {
		lo, hi := min(c.Offset, len(r)), min(c.Offset+c.Length, len(r))
		row[c.Name] = strings.TrimSpace(string(r[lo:hi]))
	}
	return row
}

func field(wa string, off, n int) string {
	lo, hi := min(off, len(wa)), min(off+n, len(wa))
	return strings.TrimSpace(wa[lo:hi])
}

// fieldWidth is the width RFC_READ_TABLE gives a field in DATA-WA: the characters of a
// character-like field, the output length of others (the larger, to stay on the safe side).
func fieldWidth(f FieldInfo) int { return max(f.Length, f.OutputLength) }

// splitFields plans field chunks that each hold all key fields and fit MaxRowWidth.
func splitFields(info []FieldInfo, want []string) ([][]string, []string, error) {
	byName := map[string]FieldInfo{}
	var keys []string
	keyWidth := 0
	for _, f := range info {
		byName[f.Name] = f
		if f.Key {
			keys = append(keys, f.Name)
			keyWidth += fieldWidth(f)
		}
	}
	if len(keys) == 0 {
		return nil, nil, newErr(sap.ErrDataBufferExceeded, 422, "DATA_BUFFER_EXCEEDED", "row wider than 512 characters and the table has no key to join chunks on")
	}
	if len(want) == 0 {
		for _, f := range info {
			want = append(want, f.Name)
		}
	}
	isKey := map[string]bool{}
	for _, k := range keys {
		isKey[k] = true
	}
	var chunks [][]string
	cur, width := append([]string(nil), keys...), keyWidth
	added := false
	for _, name := range want {
		f, ok := byName[name]
		if !ok {
			return nil, nil, newErr(sap.ErrNotFound, 404, "FIELD_NOT_VALID", "field "+name+" is not a field of the table")
		}
		if isKey[name] {
			continue
		}
		w := fieldWidth(f)
		if keyWidth+w > MaxRowWidth {
			return nil, nil, newErr(sap.ErrDataBufferExceeded, 422, "DATA_BUFFER_EXCEEDED", fmt.Sprintf("field %s (%d characters) does not fit 512 characters beside the key", name, w))
		}
		if width+w > MaxRowWidth {
			chunks = append(chunks, cur)
			cur, width, added = append([]string(nil), keys...), keyWidth, false
		}
		cur = append(cur, name)
		width += w
		added = true
	}
	if added || len(chunks) == 0 {
		chunks = append(chunks, cur)
	}
	return chunks, keys, nil
}

// mergeColumns lists each field once, in the order the chunks name them.
func mergeColumns(chunks [][]Column) []Column {
	seen := map[string]bool{}
	var out []Column
	for _, cs := range chunks {
		for _, c := range cs {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	if len(chunks) > 1 {
		// Offsets differ per chunk; a merged list has no single line to point into.
		for i := range out {
			out[i].Offset = -1
		}
	}
	return out
}
