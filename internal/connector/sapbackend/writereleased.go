package sapbackend

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/odata"
)

// ETL into S/4HANA's master data goes through the released APIs (Clean Core level A) rather
// than writing KNA1/MARA/MAKT: the APIs run SAP's own checks and CVI, and need nothing of ours
// installed in the system.

// apiField is where a table column goes: a property of one entity set of the service.
type apiField struct{ set, prop string }

// releasedTable maps one table onto a released API.
type releasedTable struct {
	service  string
	head     string              // the entity set a create posts (the others ride in its deep insert)
	keys     []string            // key columns, in the API key's order
	cols     map[string]apiField // every column the mapping carries (keys included)
	required []string            // columns a create needs
	// plan reads what exists for a page of rows and turns each into its writes (one
	// changeset per row) or a row error.
	plan func(ctx context.Context, b *Backend, oc odata.Credentials, t *releasedTable, rows []*apiRow, insert bool) error
}

// apiRow is one row on its way through a released API.
type apiRow struct {
	n      int                       // 1-based row number in the request
	key    map[string]string         // key column → value
	sets   map[string]map[string]any // entity set → properties
	cols   map[string]bool           // columns the row gives
	exists bool
	ops    []odata.Op
	err    *sap.RowError
}

func (r *apiRow) fail(field, format string, args ...any) {
	if r.err == nil {
		r.err = &sap.RowError{Row: r.n, Field: field, Message: fmt.Sprintf(format, args...)}
	}
}

// releasedTables: KNA1 is the customer (the business partner of category organization with its
// address, customer role and A_Customer); MARA and MAKT are the product and its descriptions.
var releasedTables = map[string]*releasedTable{
	"KNA1": {service: serviceBP, head: "A_BusinessPartner", keys: []string{"KUNNR"}, required: []string{"NAME1", "LAND1"}, plan: planCustomers,
		cols: map[string]apiField{
			"KUNNR": {"A_Customer", "Customer"}, "NAME1": {"A_BusinessPartner", "OrganizationBPName1"},
			"LAND1": {"A_BusinessPartnerAddress", "Country"}, "ORT01": {"A_BusinessPartnerAddress", "CityName"},
			"PSTLZ": {"A_BusinessPartnerAddress", "PostalCode"}, "STRAS": {"A_BusinessPartnerAddress", "StreetName"},
			"KTOKD": {"A_Customer", "CustomerAccountGroup"}, "STCEG": {"A_Customer", "VATRegistration"}}},
	"MARA": {service: serviceProduct, head: "A_Product", keys: []string{"MATNR"}, required: []string{"MTART", "MBRSH"}, plan: planSingle("A_Product"),
		cols: map[string]apiField{
			"MATNR": {"A_Product", "Product"}, "MTART": {"A_Product", "ProductType"}, "MBRSH": {"A_Product", "IndustrySector"},
			"MATKL": {"A_Product", "ProductGroup"}, "MEINS": {"A_Product", "BaseUnit"}, "BRGEW": {"A_Product", "GrossWeight"},
			"NTGEW": {"A_Product", "NetWeight"}, "GEWEI": {"A_Product", "WeightUnit"}, "SPART": {"A_Product", "Division"}}},
	"MAKT": {service: serviceProduct, head: "A_ProductDescription", keys: []string{"MATNR", "SPRAS"}, required: []string{"MAKTX"}, plan: planSingle("A_ProductDescription"),
		cols: map[string]apiField{
			"MATNR": {"A_ProductDescription", "Product"}, "SPRAS": {"A_ProductDescription", "Language"},
			"MAKTX": {"A_ProductDescription", "ProductDescription"}}},
}

// apiPage is how many rows go in one $batch (each row its own changeset).
const apiPage = 100

// releasedWrite is write_table's route through a released API: an S/4HANA system whose
// interfaces enable odata and a table in releasedTables; nil keeps the Z package route.
func (b *Backend) releasedWrite(ctx context.Context, cred connector.Credentials, table string) *releasedTable {
	t := releasedTables[table]
	if t == nil || b.od == nil || !b.isS4(ctx, cred) {
		return nil
	}
	return t
}

// writeReleased runs write_table through t's API. insert creates and refuses an existing key;
// modify changes what exists (PATCH with the ETag just read) and creates the rest. Each row is
// one changeset, so a refused row leaves the others written, as the Z package does. A test run
// maps, validates against $metadata and reads what exists, and writes nothing.
func (b *Backend) writeReleased(ctx context.Context, cred connector.Credentials, table string, t *releasedTable, req sap.WriteTableRequest) (*sap.WriteTableResponse, error) {
	oc := odCred(cred)
	schema, err := b.schema(ctx, oc, t.service)
	if err != nil {
		_, perr := odataErr(err)
		return nil, perr
	}
	insert := req.Mode == "insert"
	out := &sap.WriteTableResponse{Errors: []sap.RowError{}}
	seen := map[string]bool{}
	for start := 0; start < len(req.Rows); start += apiPage {
		var page []*apiRow
		for i, raw := range req.Rows[start:min(start+apiPage, len(req.Rows))] {
			r := b.mapRow(table, t, start+i+1, raw)
			if r.err == nil {
				k := strings.Join(keyValuesOf(t, r), "/")
				if seen[k] {
					r.fail(t.keys[0], "key %s appears twice in the request", k)
				}
				seen[k] = true
			}
			page = append(page, r)
		}
		var ok []*apiRow
		for _, r := range page {
			if r.err == nil {
				ok = append(ok, r)
			}
		}
		if len(ok) > 0 {
			if err := t.plan(ctx, b, oc, t, ok, insert); err != nil {
				return nil, err
			}
		}
		var writes []*apiRow
		for _, r := range ok {
			if r.err == nil {
				r.validate(t, schema)
			}
			if r.err == nil && len(r.ops) > 0 {
				writes = append(writes, r)
			}
		}
		if !req.TestRun && len(writes) > 0 {
			if err := b.sendRows(ctx, oc, t, writes); err != nil {
				return nil, err
			}
		}
		for _, r := range page {
			switch {
			case r.err != nil:
				out.Errors = append(out.Errors, *r.err)
			case r.exists:
				out.Updated++
			default:
				out.Inserted++
			}
		}
	}
	msg := fmt.Sprintf("%d rows inserted, %d updated in %s through the released API %s", out.Inserted, out.Updated, table, t.service)
	if req.TestRun {
		msg = fmt.Sprintf("Test run: nothing was saved; %d rows would be inserted, %d updated in %s through the released API %s", out.Inserted, out.Updated, table, t.service)
	}
	out.Return = []sap.BAPIReturn{{Type: "S", ID: t.service, Number: "000", Message: msg}}
	return out, nil
}

func keyValuesOf(t *releasedTable, r *apiRow) []string {
	out := make([]string, len(t.keys))
	for i, k := range t.keys {
		out[i] = r.key[k]
	}
	return out
}

// mapRow puts a row's columns onto the API's properties. A column the mapping does not carry
// is the row's error (never dropped); MANDT is accepted when it is the connection's client.
func (b *Backend) mapRow(table string, t *releasedTable, n int, raw map[string]string) *apiRow {
	r := &apiRow{n: n, key: map[string]string{}, sets: map[string]map[string]any{}, cols: map[string]bool{}}
	names := make([]string, 0, len(raw))
	for c := range raw {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		col, v := strings.ToUpper(strings.TrimSpace(c)), strings.TrimSpace(raw[c])
		if col == "MANDT" {
			if v != "" && v != b.sys.Client {
				r.fail(col, "MANDT %s is not the connection's client %s: the released API writes into the client it is called in", v, b.sys.Client)
			}
			continue
		}
		f, ok := t.cols[col]
		if !ok {
			r.fail(col, "%s-%s has no mapping onto %s (the connector maps %s); leave it out of the field mapping", table, col, t.service, strings.Join(mappedCols(t), ", "))
			continue
		}
		switch col {
		case "KUNNR":
			v = alphaPad(strings.ToUpper(v), 10)
		case "MATNR":
			v = strings.ToUpper(v)
		case "SPRAS":
			if iso := isoOfKey(v); iso != "" {
				v = iso
			} else {
				r.fail(col, "language %q is neither SAP's one-letter key nor an ISO code the connector knows", v)
				continue
			}
		}
		if slices.Contains(t.keys, col) {
			r.key[col] = v
		}
		if v == "" {
			continue
		}
		r.cols[col] = true
		if r.sets[f.set] == nil {
			r.sets[f.set] = map[string]any{}
		}
		r.sets[f.set][f.prop] = v
	}
	for _, k := range t.keys {
		if r.key[k] == "" {
			r.fail(k, "key field %s is missing or empty", k)
		}
	}
	return r
}

func mappedCols(t *releasedTable) []string {
	out := make([]string, 0, len(t.cols))
	for c := range t.cols {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// validate checks a row's creates (required columns) and every entity against $metadata
// (property known and writable, length, type); a failure names the table's column.
func (r *apiRow) validate(t *releasedTable, schema *odata.Schema) {
	if !r.exists {
		for _, c := range t.required {
			if !r.cols[c] {
				r.fail(c, "%s is required to create %s", c, strings.Join(keyValuesOf(t, r), "/"))
				return
			}
		}
	}
	kind := odata.WriteUpdate
	if !r.exists {
		kind = odata.WriteCreate
	}
	sets := make([]string, 0, len(r.sets))
	for s := range r.sets {
		sets = append(sets, s)
	}
	sort.Strings(sets)
	for _, set := range sets {
		props, k := r.sets[set], kind
		// The parts of a deep insert need not be creatable on their own (A_Customer is not):
		// their values are checked as the update of the set they belong to.
		if k == odata.WriteUpdate || set != t.head {
			props, k = withoutKeys(t, set, props), odata.WriteUpdate
		}
		if err := schema.ValidateWrite(set, k, props); err != nil {
			r.failOData(t, set, err)
			return
		}
	}
}

// withoutKeys drops the key properties an update does not send.
func withoutKeys(t *releasedTable, set string, props map[string]any) map[string]any {
	out := map[string]any{}
	for p, v := range props {
		isKey := false
		for _, k := range t.keys {
			if f := t.cols[k]; f.set == set && f.prop == p {
				isKey = true
			}
		}
		if !isKey {
			out[p] = v
		}
	}
	return out
}

// failOData makes a refused write the row's error, naming the column behind the property.
func (r *apiRow) failOData(t *releasedTable, set string, err error) {
	field, msg := "", err.Error()
	var oe *odata.Error
	if errors.As(err, &oe) {
		msg = oe.Protocol().Message
		for col, f := range t.cols {
			if f.prop == oe.Field && (set == "" || f.set == set) {
				field = col
			}
		}
		if field == "" {
			field = oe.Field
		}
	}
	r.fail(field, "%s", msg)
}

// readPaths answers GETs (by key or a filtered list) in one $batch, in order.
func (b *Backend) readPaths(ctx context.Context, oc odata.Credentials, service string, paths []string) ([]odata.OpResult, error) {
	parts := make([]odata.BatchPart, len(paths))
	for i, p := range paths {
		parts[i] = odata.BatchPart{Read: &odata.Op{Method: http.MethodGet, Path: p}}
	}
	res, err := b.od.Batch(ctx, oc, service, parts)
	if err != nil {
		_, perr := odataErr(err)
		return nil, perr
	}
	out := make([]odata.OpResult, len(res))
	for i, p := range res {
		if len(p.Results) == 1 {
			out[i] = p.Results[0]
		}
	}
	return out, nil
}

// readAnswer reads one answer of readPaths: the entity, or nil when SAP says it does not exist;
// other failures (authorization, outages) stop the call.
func readAnswer(res odata.OpResult, list bool) (*odata.Entity, error) {
	if res.Err != nil {
		if errors.Is(res.Err, odata.ErrNotFound) && !list {
			return nil, nil
		}
		return nil, res.Err.Protocol()
	}
	if list {
		p, err := odata.ParseEntitySet(res.Body)
		if err != nil {
			return nil, protoErr(err)
		}
		if len(p.Entities) == 0 {
			return nil, nil
		}
		return &p.Entities[0], nil
	}
	e, err := odata.ParseEntity(res.Body, res.Header.Get("ETag"))
	if err != nil {
		return nil, protoErr(err)
	}
	return &e, nil
}

func filterPath(set, filter string) string {
	q := url.Values{"$filter": {filter}, "$top": {"1"}}
	return set + "?" + strings.ReplaceAll(q.Encode(), "+", "%20")
}

func quoted(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }

// planSingle plans a table that is one entity set with the table's key as its key.
func planSingle(set string) func(context.Context, *Backend, odata.Credentials, *releasedTable, []*apiRow, bool) error {
	return func(ctx context.Context, b *Backend, oc odata.Credentials, t *releasedTable, rows []*apiRow, insert bool) error {
		paths := make([]string, len(rows))
		for i, r := range rows {
			paths[i] = set + entityKey(t, r)
		}
		res, err := b.readPaths(ctx, oc, t.service, paths)
		if err != nil {
			return err
		}
		for i, r := range rows {
			cur, err := readAnswer(res[i], false)
			if err != nil {
				return err
			}
			r.exists = cur != nil
			switch {
			case r.exists && insert:
				r.fail(t.keys[0], "%s %s already exists (mode insert)", set, strings.Join(keyValuesOf(t, r), "/"))
			case r.exists:
				if props := withoutKeys(t, set, r.sets[set]); len(props) > 0 {
					r.patch(set+entityKey(t, r), cur.ETag, props)
				}
			default:
				r.post(set, r.sets[set])
			}
		}
		return nil
	}
}

func entityKey(t *releasedTable, r *apiRow) string {
	kv := make([]odata.KeyValue, len(t.keys))
	for i, k := range t.keys {
		kv[i] = odata.KeyValue{Name: t.cols[k].prop, Value: r.key[k]}
	}
	return odata.KeyPredicate(kv...)
}

func (r *apiRow) post(set string, body map[string]any) {
	data, err := jsonBody(body)
	if err != nil {
		r.fail("", "%v", err)
		return
	}
	r.ops = append(r.ops, odata.Op{Method: http.MethodPost, Path: set, Header: http.Header{"Content-Type": {"application/json"}}, Body: data})
}

func (r *apiRow) patch(path, etag string, props map[string]any) {
	op, err := patchOp(path, etag, props)
	if err != nil {
		r.fail("", "%v", err)
		return
	}
	r.ops = append(r.ops, op)
}

// planCustomers finds each customer's business partner (A_BusinessPartner with Customer eq
// KUNNR) and, for changes of the address, its first address. A new customer is one deep
// insert: the organization (category 2) numbered KUNNR — the system's BP and customer number
// ranges must allow that external number, as with harmonized CVI numbering — with the customer
// role FLCU00, the address and to_Customer.
func planCustomers(ctx context.Context, b *Backend, oc odata.Credentials, t *releasedTable, rows []*apiRow, insert bool) error {
	paths := make([]string, len(rows))
	for i, r := range rows {
		paths[i] = filterPath("A_BusinessPartner", "Customer eq "+quoted(r.key["KUNNR"]))
	}
	res, err := b.readPaths(ctx, oc, serviceBP, paths)
	if err != nil {
		return err
	}
	bps := make([]*odata.Entity, len(rows))
	var needAddr, needCust []int
	for i, r := range rows {
		if bps[i], err = readAnswer(res[i], true); err != nil {
			return err
		}
		r.exists = bps[i] != nil
		switch {
		case r.exists && insert:
			r.fail("KUNNR", "Customer %s already exists (mode insert)", r.key["KUNNR"])
		case !r.exists:
			body := map[string]any{"BusinessPartnerCategory": "2", "BusinessPartner": r.key["KUNNR"],
				"to_BusinessPartnerRole": map[string]any{"results": []any{map[string]any{"BusinessPartnerRole": "FLCU00"}}}}
			for p, v := range r.sets["A_BusinessPartner"] {
				body[p] = v
			}
			if a := r.sets["A_BusinessPartnerAddress"]; len(a) > 0 {
				body["to_BusinessPartnerAddress"] = map[string]any{"results": []any{a}}
			}
			body["to_Customer"] = r.sets["A_Customer"]
			data, err := jsonBody(body)
			if err != nil {
				return err
			}
			r.ops = append(r.ops, odata.Op{Method: http.MethodPost, Path: "A_BusinessPartner", Header: http.Header{"Content-Type": {"application/json"}}, Body: data})
		default:
			bp, _ := bps[i].Properties["BusinessPartner"].(string)
			if p := r.sets["A_BusinessPartner"]; len(p) > 0 {
				r.patch("A_BusinessPartner"+odata.KeyPredicate(odata.KeyValue{Name: "BusinessPartner", Value: bp}), bps[i].ETag, p)
			}
			if len(r.sets["A_BusinessPartnerAddress"]) > 0 {
				needAddr = append(needAddr, i)
			}
			if len(withoutKeys(t, "A_Customer", r.sets["A_Customer"])) > 0 {
				needCust = append(needCust, i)
			}
		}
	}
	if len(needAddr)+len(needCust) == 0 {
		return nil
	}
	paths = paths[:0]
	for _, i := range needAddr {
		bp, _ := bps[i].Properties["BusinessPartner"].(string)
		paths = append(paths, filterPath("A_BusinessPartnerAddress", "BusinessPartner eq "+quoted(bp)))
	}
	for _, i := range needCust {
		paths = append(paths, "A_Customer"+odata.KeyPredicate(odata.KeyValue{Name: "Customer", Value: rows[i].key["KUNNR"]}))
	}
	res, err = b.readPaths(ctx, oc, serviceBP, paths)
	if err != nil {
		return err
	}
	for j, i := range needAddr {
		r := rows[i]
		a, err := readAnswer(res[j], true)
		if err != nil {
			return err
		}
		if a == nil {
			r.fail("LAND1", "customer %s's business partner has no address to change", r.key["KUNNR"])
			continue
		}
		bp, _ := a.Properties["BusinessPartner"].(string)
		id, _ := a.Properties["AddressID"].(string)
		r.patch("A_BusinessPartnerAddress"+odata.KeyPredicate(odata.KeyValue{Name: "BusinessPartner", Value: bp}, odata.KeyValue{Name: "AddressID", Value: id}),
			a.ETag, r.sets["A_BusinessPartnerAddress"])
	}
	for j, i := range needCust {
		r := rows[i]
		c, err := readAnswer(res[len(needAddr)+j], false)
		if err != nil {
			return err
		}
		if c == nil {
			r.fail("KUNNR", "customer %s vanished while it was written", r.key["KUNNR"])
			continue
		}
		r.patch("A_Customer"+odata.KeyPredicate(odata.KeyValue{Name: "Customer", Value: r.key["KUNNR"]}), c.ETag,
			withoutKeys(t, "A_Customer", r.sets["A_Customer"]))
	}
	return nil
}

// sendRows sends the rows' writes in one $batch, one changeset per row. SAP's refusal of a
// row's values or a conflict (412: changed since it was read) is that row's error; a refusal
// of the user (401/403) or an outage stops the call.
func (b *Backend) sendRows(ctx context.Context, oc odata.Credentials, t *releasedTable, rows []*apiRow) error {
	parts := make([]odata.BatchPart, len(rows))
	for i, r := range rows {
		parts[i] = odata.BatchPart{Changeset: r.ops}
	}
	res, err := b.od.Batch(ctx, oc, t.service, parts)
	if err != nil {
		_, perr := odataErr(err)
		return perr
	}
	for i, r := range rows {
		failed := res[i].Failed()
		if failed == nil {
			continue
		}
		switch {
		case errors.Is(failed, odata.ErrBadInput), failed.Status == http.StatusPreconditionFailed, failed.Status == http.StatusNotFound:
			r.failOData(t, "", failed)
		default:
			return failed.Protocol()
		}
	}
	return nil
}
