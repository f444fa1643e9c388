package saptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sapagent/sapagent/internal/etl"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sapconn"
)

// Ledger remembers ETL runs, so a load can insist on an earlier successful dry run of the
// same mapping (stored in Postgres by the worker).
type Ledger interface {
	SucceededDryRun(ctx context.Context, fingerprint string) (bool, error)
	Record(ctx context.Context, run Run) error
}

// Run is one extract_transform_load execution.
type Run struct {
	Fingerprint string
	Source      string
	Target      string
	DryRun      bool
	Extracted   int
	Inserted    int
	Updated     int
	Failed      int
}

// cross runs a cross-connection tool on the source and target connections the arguments name.
func (e *Executor) cross(args map[string]any, run func(j *job) (any, error)) (any, error) {
	if len(e.Conns) < 2 {
		return nil, errors.New("cross-connection tools need two connections in the workspace")
	}
	src, err := e.resolveID(args, "source_connection_id")
	if err != nil {
		return nil, err
	}
	dst, err := e.resolveID(args, "target_connection_id")
	if err != nil {
		return nil, err
	}
	if src.ID == dst.ID {
		return nil, errors.New("source and target must be different connections")
	}
	out, err := run(&job{e: e, src: src, dst: dst, where: str(args, "where")})
	if err != nil {
		var se *sap.Error
		if errors.As(err, &se) {
			return nil, errors.New(sap.Describe(err))
		}
		return nil, err
	}
	return out, nil
}

// mapped runs a cross-connection tool that works through the mapping argument.
func (e *Executor) mapped(args map[string]any, run func(j *job) (any, error)) (any, error) {
	return e.cross(args, func(j *job) (any, error) {
		m, err := mappingArg(args)
		if err != nil {
			return nil, err
		}
		j.m = m
		return run(j)
	})
}

// GenerateFieldMapping runs generate_field_mapping.
func (e *Executor) GenerateFieldMapping(ctx context.Context, args map[string]any) (any, error) {
	return e.cross(args, func(j *job) (any, error) {
		target := upper(args, "target_table")
		if target == "" {
			target = upper(args, "source_table")
		}
		return j.generateMapping(ctx, upper(args, "source_table"), target)
	})
}

// SuggestTransforms runs suggest_transforms.
func (e *Executor) SuggestTransforms(ctx context.Context, args map[string]any) (any, error) {
	return e.mapped(args, func(j *job) (any, error) { return j.suggest(ctx, intArg(args, "sample_size", 50)) })
}

// ValidateMigration runs validate_migration.
func (e *Executor) ValidateMigration(ctx context.Context, args map[string]any) (any, error) {
	return e.mapped(args, func(j *job) (any, error) { return j.validate(ctx, intArg(args, "sample_size", 100)) })
}

// PreviewDataTransform runs preview_data_transform.
func (e *Executor) PreviewDataTransform(ctx context.Context, args map[string]any) (any, error) {
	return e.mapped(args, func(j *job) (any, error) { return j.preview(ctx, intArg(args, "rows", 10)) })
}

// ExtractTransformLoad runs extract_transform_load (a dry run, or the load after one).
func (e *Executor) ExtractTransformLoad(ctx context.Context, args map[string]any) (any, error) {
	return e.mapped(args, func(j *job) (any, error) {
		dry, _ := args["dry_run"].(bool)
		mode := str(args, "mode")
		if mode == "" {
			mode = "insert"
		}
		return j.load(ctx, dry, mode, intArg(args, "max_rows", 10000))
	})
}

// ReconcileMigration runs reconcile_migration.
func (e *Executor) ReconcileMigration(ctx context.Context, args map[string]any) (any, error) {
	return e.mapped(args, func(j *job) (any, error) { return j.reconcile(ctx, intArg(args, "sample_size", 200)) })
}

func (e *Executor) resolveID(args map[string]any, key string) (sapconn.Conn, error) {
	id := str(args, key)
	for _, c := range e.Conns {
		if strings.EqualFold(c.ID, id) || strings.EqualFold(c.Name, id) {
			return c, nil
		}
	}
	return sapconn.Conn{}, fmt.Errorf("unknown %s %q; choose one of: %s", key, id, e.describeConns())
}

func mappingArg(args map[string]any) (etl.Mapping, error) {
	raw, err := json.Marshal(args["mapping"])
	if err != nil {
		return etl.Mapping{}, err
	}
	var m etl.Mapping
	if err := json.Unmarshal(raw, &m); err != nil {
		return etl.Mapping{}, fmt.Errorf("mapping: %v", err)
	}
	m.SourceTable, m.TargetTable = strings.ToUpper(m.SourceTable), strings.ToUpper(m.TargetTable)
	for i := range m.Fields {
		f := &m.Fields[i]
		f.Target, f.Source = strings.ToUpper(f.Target), strings.ToUpper(f.Source)
		for k := range f.Fields {
			f.Fields[k] = strings.ToUpper(f.Fields[k])
		}
	}
	return m, m.Check()
}

// job is one cross-connection call.
type job struct {
	e        *Executor
	src, dst sapconn.Conn
	m        etl.Mapping
	where    string

	srcSchema, dstSchema *sap.TableSchema // the mapping's tables, read once per call
}

// schemas returns the mapping's source and target table definitions, reading each once.
func (j *job) schemas(ctx context.Context) (src, dst sap.TableSchema, err error) {
	if j.srcSchema == nil {
		s, err := schemaOf(ctx, j.src, j.m.SourceTable)
		if err != nil {
			return src, dst, err
		}
		j.srcSchema = &s
	}
	if j.dstSchema == nil {
		s, err := schemaOf(ctx, j.dst, j.m.TargetTable)
		if err != nil {
			return src, dst, err
		}
		j.dstSchema = &s
	}
	return *j.srcSchema, *j.dstSchema, nil
}

func schemaOf(ctx context.Context, c sapconn.Conn, table string) (sap.TableSchema, error) {
	var s sap.TableSchema
	err := c.API.Call(ctx, sap.EndpointTableSchema, sap.TableSchemaRequest{Table: table}, &s)
	return s, err
}

func fieldsByName(s sap.TableSchema) map[string]sap.Field {
	out := make(map[string]sap.Field, len(s.Fields))
	for _, f := range s.Fields {
		out[f.Name] = f
	}
	return out
}

// keyFields are a table's key fields without the client (each system fills its own).
func keyFields(s sap.TableSchema) []string {
	var out []string
	for _, f := range s.Fields {
		if f.Key && f.Type != "CLNT" && f.Name != "MANDT" {
			out = append(out, f.Name)
		}
	}
	return out
}

// generateMapping maps equal field names directly, and reports what has no counterpart.
func (j *job) generateMapping(ctx context.Context, source, target string) (any, error) {
	ss, err := schemaOf(ctx, j.src, source)
	if err != nil {
		return nil, err
	}
	ts, err := schemaOf(ctx, j.dst, target)
	if err != nil {
		return nil, err
	}
	srcFields := fieldsByName(ss)
	m := etl.Mapping{SourceTable: source, TargetTable: target}
	var unmappedTarget, warnings []string
	used := map[string]bool{}
	for _, tf := range ts.Fields {
		if tf.Type == "CLNT" || tf.Name == "MANDT" {
			continue
		}
		sf, ok := srcFields[tf.Name]
		if !ok {
			unmappedTarget = append(unmappedTarget, tf.Name)
			if tf.Key {
				warnings = append(warnings, fmt.Sprintf("target key field %s has no source field; map it before loading", tf.Name))
			}
			continue
		}
		used[sf.Name] = true
		fm := etl.FieldMapping{Target: tf.Name, Source: sf.Name, Transform: etl.Direct}
		if sf.Length > tf.Length {
			fm.Transform, fm.Start, fm.Length = etl.Substring, 0, tf.Length
			warnings = append(warnings, fmt.Sprintf("%s is %d characters on the source but %d on the target: values are cut (check with validate_migration)", tf.Name, sf.Length, tf.Length))
		} else if sf.Length < tf.Length && tf.Key && (tf.Type == "CHAR" || tf.Type == "NUMC") {
			fm.Transform, fm.Length = etl.AlphaIn, tf.Length
			warnings = append(warnings, fmt.Sprintf("key %s grows from %d to %d characters: numeric values get leading zeros (alpha_in)", tf.Name, sf.Length, tf.Length))
		}
		m.Fields = append(m.Fields, fm)
	}
	var unmappedSource []string
	for _, sf := range ss.Fields {
		if used[sf.Name] || sf.Type == "CLNT" || sf.Name == "MANDT" {
			continue
		}
		unmappedSource = append(unmappedSource, sf.Name)
		if sf.Appended || strings.HasPrefix(sf.Name, "ZZ") || strings.HasPrefix(sf.Name, "YY") {
			warnings = append(warnings, fmt.Sprintf("customer field %s has no target field: it needs an extension field on the target (e.g. a YY1_ field) or will not be migrated", sf.Name))
		}
	}
	return map[string]any{"mapping": m, "unmapped_target_fields": nonNil(unmappedTarget), "unmapped_source_fields": nonNil(unmappedSource), "warnings": nonNil(warnings)}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// readSource reads the mapping's source fields (plus the fields needed to key rows), paging
// by rows and splitting the field list into groups that fit RFC_READ_TABLE's 512 characters.
func (j *job) readSource(ctx context.Context, limit int) ([]map[string]string, error) {
	ss, _, err := j.schemas(ctx)
	if err != nil {
		return nil, err
	}
	return readRows(ctx, j.src, ss, j.m.SourceFields(), j.where, limit)
}

func readRows(ctx context.Context, c sapconn.Conn, schema sap.TableSchema, want []string, where string, limit int) ([]map[string]string, error) {
	byName := fieldsByName(schema)
	keys := keyFields(schema)
	for _, f := range want {
		if _, ok := byName[f]; !ok {
			return nil, fmt.Errorf("table %s on %s has no field %s", schema.Table, c.Name, f)
		}
	}
	keyWidth := 0
	for _, k := range keys {
		keyWidth += byName[k].Length
	}
	// Groups of fields, each with the key fields, within the row width.
	var groups [][]string
	cur, width := append([]string(nil), keys...), keyWidth
	isKey := map[string]bool{}
	for _, k := range keys {
		isKey[k] = true
	}
	for _, f := range want {
		if isKey[f] {
			continue
		}
		l := byName[f].Length
		if width+l > sap.MaxReadTableWidth && len(cur) > len(keys) {
			groups = append(groups, cur)
			cur, width = append([]string(nil), keys...), keyWidth
		}
		cur, width = append(cur, f), width+l
	}
	groups = append(groups, cur)
	const page = 1000
	var rows []map[string]string
	index := map[string]map[string]string{}
	for gi, g := range groups {
		for skip := 0; skip < limit; skip += page {
			n := page
			if limit-skip < n {
				n = limit - skip
			}
			var res sap.ReadTableResponse
			if err := c.API.Call(ctx, sap.EndpointReadTable, sap.ReadTableRequest{Table: schema.Table, Fields: g, Options: WhereLines(where), RowSkip: skip, RowCount: n}, &res); err != nil {
				return nil, err
			}
			for _, r := range shapeRows(schema.Table, res).Rows() {
				k := rowKey(r, keys)
				if gi == 0 {
					rows = append(rows, r)
					index[k] = r
					continue
				}
				if base, ok := index[k]; ok {
					for f, v := range r {
						base[f] = v
					}
				}
			}
			if len(res.Rows) < n {
				break
			}
		}
	}
	return rows, nil
}

func rowKey(r map[string]string, keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = r[k]
	}
	return strings.Join(parts, "/")
}

// checkValue says why v does not fit field f, or "".
func checkValue(f sap.Field, v string) string {
	if len([]rune(v)) > f.Length && f.Type != "STRG" {
		return fmt.Sprintf("%q is longer than %d characters", v, f.Length)
	}
	switch f.Type {
	case "NUMC":
		if strings.Trim(v, "0123456789") != "" {
			return fmt.Sprintf("%q is not numeric (NUMC)", v)
		}
	case "DATS":
		if v != "" && v != "00000000" && (len(v) != 8 || strings.Trim(v, "0123456789") != "") {
			return fmt.Sprintf("%q is not a date YYYYMMDD", v)
		}
	}
	return ""
}

func (j *job) validate(ctx context.Context, sample int) (any, error) {
	ss, ts, err := j.schemas(ctx)
	if err != nil {
		return nil, err
	}
	errs, warnings := []string{}, []string{}
	src, dst := fieldsByName(ss), fieldsByName(ts)
	mapped := map[string]bool{}
	for _, f := range j.m.Fields {
		mapped[f.Target] = true
		if _, ok := dst[f.Target]; !ok {
			errs = append(errs, fmt.Sprintf("target table %s has no field %s", ts.Table, f.Target))
		}
	}
	for _, f := range j.m.SourceFields() {
		if _, ok := src[f]; !ok {
			errs = append(errs, fmt.Sprintf("source table %s has no field %s", ss.Table, f))
		}
	}
	for _, k := range keyFields(ts) {
		if !mapped[k] {
			errs = append(errs, fmt.Sprintf("target key field %s is not mapped", k))
		}
	}
	for _, f := range ts.Fields {
		if !mapped[f.Name] && !f.Key && f.Name != "MANDT" {
			warnings = append(warnings, fmt.Sprintf("target field %s is not mapped and stays empty", f.Name))
		}
	}
	sampled := 0
	if len(errs) == 0 {
		rows, err := j.readSource(ctx, sample)
		if err != nil {
			return nil, err
		}
		sampled = len(rows)
		seen := map[string]bool{}
		keys := keyFields(ts)
		for i, r := range rows {
			out, err := j.m.Transform(r)
			if err != nil {
				errs = append(errs, fmt.Sprintf("row %d: %v", i+1, err))
				continue
			}
			for _, f := range j.m.Fields {
				if why := checkValue(dst[f.Target], out[f.Target]); why != "" {
					errs = append(errs, fmt.Sprintf("row %d, %s: %s", i+1, f.Target, why))
				}
			}
			k := rowKey(out, keys)
			if seen[k] {
				errs = append(errs, fmt.Sprintf("row %d: target key %s appears twice after the transform", i+1, k))
			}
			seen[k] = true
			if len(errs) >= 50 {
				errs = append(errs, "… more errors not shown")
				break
			}
		}
		if sampled == 0 {
			warnings = append(warnings, "the source selection returned no rows")
		}
	}
	return map[string]any{"valid": len(errs) == 0, "errors": errs, "warnings": warnings, "sampled": sampled}, nil
}

func (j *job) preview(ctx context.Context, n int) (any, error) {
	rows, err := j.readSource(ctx, n)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		t, err := j.m.Transform(r)
		item := map[string]any{"source": r, "target": t}
		if err != nil {
			item["error"] = err.Error()
		}
		out = append(out, item)
	}
	return map[string]any{"rows": out}, nil
}

// suggest proposes transforms from the schemas and a sample of source values.
func (j *job) suggest(ctx context.Context, sample int) (any, error) {
	ss, ts, err := j.schemas(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := j.readSource(ctx, sample)
	if err != nil {
		return nil, err
	}
	src, dst := fieldsByName(ss), fieldsByName(ts)
	var out []map[string]any
	add := func(f etl.FieldMapping, reason string) {
		out = append(out, map[string]any{"target": f.Target, "transform": f.Transform, "reason": reason, "mapping": f})
	}
	for _, f := range j.m.Fields {
		if f.Source == "" {
			continue
		}
		sf, tf := src[f.Source], dst[f.Target]
		values := make([]string, 0, len(rows))
		for _, r := range rows {
			values = append(values, r[f.Source])
		}
		switch {
		case sf.Type == "DATS" && tf.Type != "DATS" && tf.Type != "":
			add(etl.FieldMapping{Target: f.Target, Source: f.Source, Transform: etl.DateFormat, From: "YYYYMMDD", To: "YYYY-MM-DD"}, "source is a DATS date, target is not a date type")
		case tf.Length > 0 && maxLen(values) > tf.Length:
			add(etl.FieldMapping{Target: f.Target, Source: f.Source, Transform: etl.Substring, Start: 0, Length: tf.Length},
				fmt.Sprintf("sample values up to %d characters, target holds %d", maxLen(values), tf.Length))
		case tf.Key && tf.Length > sf.Length && allNumeric(values):
			add(etl.FieldMapping{Target: f.Target, Source: f.Source, Transform: etl.AlphaIn, Length: tf.Length},
				fmt.Sprintf("numeric key grows from %d to %d characters: SAP stores it with leading zeros", sf.Length, tf.Length))
		case anyPadded(values):
			add(etl.FieldMapping{Target: f.Target, Source: f.Source, Transform: etl.Trim}, "sample values carry surrounding spaces")
		case f.Transform == etl.Direct && emptyShare(values) > 0.5 && !tf.Key:
			add(etl.FieldMapping{Target: f.Target, Source: f.Source, Transform: etl.DefaultIfEmpty, Value: ""},
				"more than half of the sample is empty: consider a default value")
		}
	}
	if out == nil {
		out = []map[string]any{}
	}
	return map[string]any{"suggestions": out, "sampled": len(rows)}, nil
}

func maxLen(vs []string) int {
	m := 0
	for _, v := range vs {
		if l := len([]rune(v)); l > m {
			m = l
		}
	}
	return m
}

func allNumeric(vs []string) bool {
	for _, v := range vs {
		if v == "" || strings.Trim(v, "0123456789") != "" {
			return false
		}
	}
	return len(vs) > 0
}

func anyPadded(vs []string) bool {
	for _, v := range vs {
		if v != strings.TrimSpace(v) {
			return true
		}
	}
	return false
}

func emptyShare(vs []string) float64 {
	if len(vs) == 0 {
		return 0
	}
	n := 0
	for _, v := range vs {
		if strings.TrimSpace(v) == "" {
			n++
		}
	}
	return float64(n) / float64(len(vs))
}

// fingerprint identifies a load: mapping, connections and filter.
func (j *job) fingerprint() string {
	return j.src.ID + ">" + j.dst.ID + "|" + j.where + "|" + j.m.Fingerprint()
}

// loadError is one row the target refused.
type loadError struct {
	Row     int    `json:"row"`
	Key     string `json:"key"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// load extracts, transforms and writes in batches; a dry run validates on the target only.
func (j *job) load(ctx context.Context, dry bool, mode string, maxRows int) (any, error) {
	fp := j.fingerprint()
	if !dry {
		if j.e.Ledger == nil {
			return nil, errors.New("loads are unavailable: no run ledger")
		}
		ok, err := j.e.Ledger.SucceededDryRun(ctx, fp)
		if err != nil {
			return nil, fmt.Errorf("checking for a dry run: %w", err)
		}
		if !ok {
			return nil, errors.New("no successful dry run of this mapping and filter (the latest dry run must find rows and refuse none): run extract_transform_load with dry_run=true first and fix what it reports")
		}
	}
	_, ts, err := j.schemas(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := j.readSource(ctx, maxRows)
	if err != nil {
		return nil, err
	}
	keys := keyFields(ts)
	var targets []map[string]string
	var errs []loadError
	for i, r := range rows {
		t, err := j.m.Transform(r)
		if err != nil {
			errs = append(errs, loadError{Row: i + 1, Key: rowKey(r, keys), Message: err.Error()})
			continue
		}
		targets = append(targets, t)
	}
	run := Run{Fingerprint: fp, Source: j.src.ID, Target: j.dst.ID, DryRun: dry, Extracted: len(rows), Failed: len(errs)}
	const batch = 500
	for start := 0; start < len(targets); start += batch {
		end := min(start+batch, len(targets))
		var res sap.WriteTableResponse
		err := j.dst.API.Call(ctx, sap.EndpointWriteTable, sap.WriteTableRequest{Table: j.m.TargetTable, Mode: mode, Rows: targets[start:end], TestRun: dry}, &res)
		if err != nil {
			return nil, err
		}
		run.Inserted += res.Inserted
		run.Updated += res.Updated
		run.Failed += len(res.Errors)
		for _, e := range res.Errors {
			le := loadError{Row: start + e.Row, Field: e.Field, Message: e.Message}
			if e.Row >= 1 && start+e.Row-1 < len(targets) {
				le.Key = rowKey(targets[start+e.Row-1], keys)
			}
			errs = append(errs, le)
		}
	}
	if j.e.Ledger != nil {
		if err := j.e.Ledger.Record(ctx, run); err != nil {
			return nil, fmt.Errorf("recording the run: %w", err)
		}
	}
	if len(errs) > 100 {
		errs = errs[:100]
	}
	if errs == nil {
		errs = []loadError{}
	}
	return map[string]any{"dry_run": dry, "extracted": run.Extracted, "inserted": run.Inserted, "updated": run.Updated, "failed": run.Failed, "errors": errs}, nil
}

type difference struct {
	Key      string `json:"key"`
	Field    string `json:"field"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

// reconcile compares the transformed source with the target: counts, keys, sampled values.
func (j *job) reconcile(ctx context.Context, sample int) (any, error) {
	_, ts, err := j.schemas(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := j.readSource(ctx, 1_000_000)
	if err != nil {
		return nil, err
	}
	keys := keyFields(ts)
	expected := map[string]map[string]string{}
	order := []string{}
	for _, r := range rows {
		t, err := j.m.Transform(r)
		if err != nil {
			continue
		}
		k := rowKey(t, keys)
		if _, dup := expected[k]; !dup {
			order = append(order, k)
		}
		expected[k] = t
	}
	targetFields := make([]string, 0, len(j.m.Fields))
	for _, f := range j.m.Fields {
		targetFields = append(targetFields, f.Target)
	}
	sort.Strings(targetFields)
	actualRows, err := readRows(ctx, j.dst, ts, targetFields, "", 1_000_000)
	if err != nil {
		return nil, err
	}
	actual := make(map[string]map[string]string, len(actualRows))
	for _, r := range actualRows {
		actual[rowKey(r, keys)] = r
	}
	var missing []string
	missingCount := 0
	for _, k := range order {
		if _, ok := actual[k]; !ok {
			missingCount++
			if len(missing) < 20 {
				missing = append(missing, k)
			}
		}
	}
	extra := 0
	for k := range actual {
		if _, ok := expected[k]; !ok {
			extra++
		}
	}
	// The sample: evenly spread over the source keys, deterministic.
	var diffs []difference
	diffCount, sampled := 0, 0
	step := 1
	if len(order) > sample && sample > 0 {
		step = len(order) / sample
	}
	for i := 0; i < len(order) && sampled < sample; i += step {
		k := order[i]
		got, ok := actual[k]
		if !ok {
			continue
		}
		sampled++
		for _, f := range targetFields {
			if strings.TrimSpace(expected[k][f]) != strings.TrimSpace(got[f]) {
				diffCount++
				if len(diffs) < 50 {
					diffs = append(diffs, difference{Key: k, Field: f, Expected: expected[k][f], Actual: got[f]})
				}
			}
		}
	}
	if missing == nil {
		missing = []string{}
	}
	if diffs == nil {
		diffs = []difference{}
	}
	return map[string]any{
		"clean":        missingCount == 0 && diffCount == 0,
		"source_count": len(order), "target_count": len(actualRows),
		"missing_in_target": missingCount, "missing_keys": missing, "extra_in_target": extra,
		"sampled": sampled, "field_differences": diffCount, "differences": diffs,
	}, nil
}
