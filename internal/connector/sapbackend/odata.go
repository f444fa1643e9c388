package sapbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/odata"
)

// Released APIs of S/4HANA (Clean Core level A) that replace classic BAPIs for writes.
const (
	serviceBP      = "API_BUSINESS_PARTNER"
	serviceProduct = "API_PRODUCT_SRV"
)

// releasedState caches the system's type and the services' $metadata; only answers that
// succeeded are kept, so a failed look-up is asked again on the next call.
type releasedState struct {
	mu      sync.Mutex
	s4      *bool
	schemas map[string]*odata.Schema
}

type rfcRoute func(ctx context.Context, cred connector.Credentials, req sap.ExecuteRFCRequest) (*sap.ExecuteRFCResponse, error)

// releasedRoute is the OData route of a BAPI on an S/4HANA system whose interfaces enable odata,
// nil otherwise (ECC, odata off, a BAPI without a mapping): those keep the BAPI over SOAP RFC.
func (b *Backend) releasedRoute(ctx context.Context, cred connector.Credentials, fm string) rfcRoute {
	var route rfcRoute
	switch fm {
	case "BAPI_CUSTOMER_CHANGEFROMDATA1":
		route = b.customerViaOData
	case "BAPI_MATERIAL_SAVEDATA":
		route = b.materialViaOData
	default:
		return nil
	}
	if b.od == nil || !b.isS4(ctx, cred) {
		return nil
	}
	return route
}

// isS4 reads the system type once (SystemInfo: CVERS has S4CORE). When that cannot tell (no
// SOAP RFC, no authorization for CVERS), the released API answering its $metadata decides: ECC
// has none. Only definite answers are cached.
func (b *Backend) isS4(ctx context.Context, cred connector.Credentials) bool {
	b.released.mu.Lock()
	known := b.released.s4
	b.released.mu.Unlock()
	if known != nil {
		return *known
	}
	var s4 bool
	typ := ""
	if b.rfc != nil {
		if info, err := b.SystemInfo(ctx, cred, sap.SystemInfoRequest{}); err == nil {
			typ = info.SystemType
		}
	}
	switch typ {
	case "S4HANA":
		s4 = true
	case "ECC":
		s4 = false
	default:
		_, err := b.schema(ctx, odCred(cred), serviceBP)
		if err != nil && !errors.Is(err, odata.ErrNotFound) {
			return false // unknown for now: the BAPI route reports the failure the usual way
		}
		s4 = err == nil
	}
	b.released.mu.Lock()
	b.released.s4 = &s4
	b.released.mu.Unlock()
	return s4
}

func (b *Backend) schema(ctx context.Context, cred odata.Credentials, service string) (*odata.Schema, error) {
	b.released.mu.Lock()
	s := b.released.schemas[service]
	b.released.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := b.od.Metadata(ctx, cred, service)
	if err != nil {
		return nil, err
	}
	b.released.mu.Lock()
	if b.released.schemas == nil {
		b.released.schemas = map[string]*odata.Schema{}
	}
	b.released.schemas[service] = s
	b.released.mu.Unlock()
	return s, nil
}

func odCred(c connector.Credentials) odata.Credentials {
	return odata.Credentials{User: c.User, Password: c.Password}
}

// odataErr maps a failed OData call: SAP's refusal of the values (400) becomes an E message in
// RETURN, as the BAPI would give it; the rest (401, 403, 404 of the service, 412, outages)
// are protocol errors.
func odataErr(err error) (*sap.ExecuteRFCResponse, error) {
	var oe *odata.Error
	if !errors.As(err, &oe) {
		return nil, err
	}
	if oe.Kind == odata.ErrBadInput {
		return failedReturn(oe.Code, oe.Field, "%s", oe.Protocol().Message), nil
	}
	return nil, oe.Protocol()
}

func failedReturn(code, field, format string, args ...any) *sap.ExecuteRFCResponse {
	id, num, _ := strings.Cut(code, "/")
	r := sap.BAPIReturn{Type: "E", ID: id, Number: num, Message: fmt.Sprintf(format, args...), Field: field}
	return &sap.ExecuteRFCResponse{Exports: map[string]any{"RETURN": returnExport(r)}, Tables: map[string][]map[string]any{}, Return: []sap.BAPIReturn{r}}
}

func returnExport(r sap.BAPIReturn) map[string]any {
	return map[string]any{"TYPE": r.Type, "ID": r.ID, "NUMBER": r.Number, "MESSAGE": r.Message, "FIELD": r.Field}
}

// done answers a mapped call: S with what was (or, without commit, would have been) written.
func done(committed bool, service, format string, args ...any) *sap.ExecuteRFCResponse {
	msg := fmt.Sprintf(format, args...)
	if !committed {
		msg = "Test run: nothing was saved; " + msg + " would be written through " + service
	} else {
		msg += " (through " + service + ")"
	}
	r := sap.BAPIReturn{Type: "S", ID: service, Number: "000", Message: msg}
	return &sap.ExecuteRFCResponse{Exports: map[string]any{"RETURN": returnExport(r)}, Tables: map[string][]map[string]any{}, Return: []sap.BAPIReturn{r}, Committed: committed}
}

// importText is an import's (or a structure field's) text, upper-cased keys accepted either way.
func importText(m map[string]any, key string) (string, bool) {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			s, err := scalar(key, v)
			return strings.TrimSpace(s), err == nil && v != nil
		}
	}
	return "", false
}

func importStruct(m map[string]any, key string) map[string]any {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			if s, ok := v.(map[string]any); ok {
				return s
			}
		}
	}
	return nil
}

// alphaPad applies the ALPHA conversion: a number is padded with zeros to width.
func alphaPad(v string, width int) string {
	if v == "" || strings.Trim(v, "0123456789") != "" || len(v) >= width {
		return v
	}
	return strings.Repeat("0", width-len(v)) + v
}

// fieldTarget is where a BAPI structure's fields go: fields maps them onto properties of into.
type fieldTarget struct {
	fields map[string]string
	into   map[string]any
}

// mapFields copies a BAPI structure's fields onto OData properties; a field without a mapping
// is refused (an E message) so nothing is silently left out.
func mapFields(structName, service string, data map[string]any, targets ...fieldTarget) *sap.ExecuteRFCResponse {
next:
	for k := range data {
		f := strings.ToUpper(k)
		v, _ := importText(data, k)
		for _, t := range targets {
			if prop, ok := t.fields[f]; ok {
				if v != "" {
					t.into[prop] = v
				}
				continue next
			}
		}
		var known []string
		for _, t := range targets {
			for name := range t.fields {
				known = append(known, name)
			}
		}
		sort.Strings(known)
		return failedReturn("", f, "%s-%s has no mapping onto %s; the connector maps %s", structName, f, service, strings.Join(known, ", "))
	}
	return nil
}

func jsonBody(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, badRequest("the values do not encode as JSON: %v", err)
	}
	return b, nil
}

var (
	// BAPI_CUSTOMER_CHANGEFROMDATA1's PI_COMPANYDATA onto A_BusinessPartner and its address.
	customerNameFields    = map[string]string{"NAME": "OrganizationBPName1"}
	customerAddressFields = map[string]string{"CITY": "CityName", "POSTL_COD1": "PostalCode", "STREET": "StreetName", "COUNTRY": "Country"}
	// BAPI_MATERIAL_SAVEDATA's CLIENTDATA onto A_Product.
	materialClientFields = map[string]string{"MATL_GROUP": "ProductGroup", "BASE_UOM": "BaseUnit", "NET_WEIGHT": "NetWeight", "UNIT_OF_WT": "WeightUnit", "DIVISION": "Division"}
)

// customerViaOData is BAPI_CUSTOMER_CHANGEFROMDATA1 on S/4HANA: the customer's business partner
// (A_BusinessPartner with Customer eq CUSTOMERNO) and its first address are read for their ETags,
// then changed in one $batch changeset with If-Match, so both change or neither.
func (b *Backend) customerViaOData(ctx context.Context, cred connector.Credentials, req sap.ExecuteRFCRequest) (*sap.ExecuteRFCResponse, error) {
	oc := odCred(cred)
	raw, _ := importText(req.Imports, "CUSTOMERNO")
	kunnr := alphaPad(strings.ToUpper(raw), 10)
	if kunnr == "" {
		return nil, badRequest("BAPI_CUSTOMER_CHANGEFROMDATA1 needs CUSTOMERNO")
	}
	head, addr := map[string]any{}, map[string]any{}
	if r := mapFields("PI_COMPANYDATA", serviceBP, importStruct(req.Imports, "PI_COMPANYDATA"),
		fieldTarget{customerNameFields, head}, fieldTarget{customerAddressFields, addr}); r != nil {
		return r, nil
	}
	schema, err := b.schema(ctx, oc, serviceBP)
	if err != nil {
		return odataErr(err)
	}
	page, err := b.od.List(ctx, oc, serviceBP, "A_BusinessPartner", odata.Query{Filter: "Customer eq '" + strings.ReplaceAll(kunnr, "'", "''") + "'", Top: 1})
	if err != nil {
		return odataErr(err)
	}
	if len(page.Entities) == 0 {
		return failedReturn("F2/153", "", "Customer %s does not exist (no business partner has it as Customer)", kunnr), nil
	}
	bp, _ := page.Entities[0].Properties["BusinessPartner"].(string)
	var ops []odata.Op
	if len(head) > 0 {
		if err := schema.ValidateWrite("A_BusinessPartner", odata.WriteUpdate, head); err != nil {
			return odataErr(err)
		}
		e, err := b.od.Get(ctx, oc, serviceBP, "A_BusinessPartner", []odata.KeyValue{{Name: "BusinessPartner", Value: bp}})
		if err != nil {
			return odataErr(err)
		}
		op, err := patchOp("A_BusinessPartner"+odata.KeyPredicate(odata.KeyValue{Name: "BusinessPartner", Value: bp}), e.ETag, head)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	if len(addr) > 0 {
		if err := schema.ValidateWrite("A_BusinessPartnerAddress", odata.WriteUpdate, addr); err != nil {
			return odataErr(err)
		}
		addrs, err := b.od.List(ctx, oc, serviceBP, "A_BusinessPartnerAddress", odata.Query{Filter: "BusinessPartner eq '" + strings.ReplaceAll(bp, "'", "''") + "'", Top: 1})
		if err != nil {
			return odataErr(err)
		}
		if len(addrs.Entities) == 0 {
			return failedReturn("", "", "Business partner %s (customer %s) has no address to change", bp, kunnr), nil
		}
		id, _ := addrs.Entities[0].Properties["AddressID"].(string)
		key := []odata.KeyValue{{Name: "BusinessPartner", Value: bp}, {Name: "AddressID", Value: id}}
		e, err := b.od.Get(ctx, oc, serviceBP, "A_BusinessPartnerAddress", key)
		if err != nil {
			return odataErr(err)
		}
		op, err := patchOp("A_BusinessPartnerAddress"+odata.KeyPredicate(key...), e.ETag, addr)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return b.write(ctx, oc, serviceBP, ops, req.Commit, "PI_COMPANYDATA is empty: nothing to change for customer "+kunnr,
		fmt.Sprintf("the changes for customer %s (business partner %s)", kunnr, bp),
		fmt.Sprintf("Changes have been made for customer %s (business partner %s)", kunnr, bp))
}

// write ends a mapped call: a warning when there is nothing to write, a test-run answer without
// commit, else the writes in one changeset.
func (b *Backend) write(ctx context.Context, oc odata.Credentials, service string, ops []odata.Op, commit bool, nothing, wouldWrite, written string) (*sap.ExecuteRFCResponse, error) {
	if len(ops) == 0 {
		return &sap.ExecuteRFCResponse{Exports: map[string]any{}, Tables: map[string][]map[string]any{},
			Return: []sap.BAPIReturn{{Type: "W", ID: service, Number: "000", Message: nothing}}}, nil
	}
	if !commit {
		return done(false, service, "%s", wouldWrite), nil
	}
	if resp, err := b.changeset(ctx, oc, service, ops); resp != nil || err != nil {
		return resp, err
	}
	return done(true, service, "%s", written), nil
}

func patchOp(path, etag string, props map[string]any) (odata.Op, error) {
	if etag == "" {
		return odata.Op{}, &sap.Error{Status: http.StatusBadGateway, ErrorDetail: sap.ErrorDetail{Code: sap.ErrSAPException,
			Message: "SAP sent no ETag for " + path + "; the connector does not change an entity without If-Match"}}
	}
	body, err := jsonBody(props)
	if err != nil {
		return odata.Op{}, err
	}
	return odata.Op{Method: http.MethodPatch, Path: path, Header: http.Header{"If-Match": {etag}, "Content-Type": {"application/json"}}, Body: body}, nil
}

// changeset sends the writes as one $batch changeset; a failed changeset is mapped like a
// failed single call (nil, nil when all went through).
func (b *Backend) changeset(ctx context.Context, oc odata.Credentials, service string, ops []odata.Op) (*sap.ExecuteRFCResponse, error) {
	res, err := b.od.Batch(ctx, oc, service, []odata.BatchPart{{Changeset: ops}})
	if err != nil {
		return odataErr(err)
	}
	if failed := res[0].Failed(); failed != nil {
		return odataErr(failed)
	}
	return nil, nil
}

// materialViaOData is BAPI_MATERIAL_SAVEDATA on S/4HANA: a new product is one POST of A_Product
// with its descriptions (deep insert); an existing one is changed in one changeset (PATCH of
// A_Product and of each existing description with If-Match, POST of new descriptions).
func (b *Backend) materialViaOData(ctx context.Context, cred connector.Credentials, req sap.ExecuteRFCRequest) (*sap.ExecuteRFCResponse, error) {
	oc := odCred(cred)
	headData := importStruct(req.Imports, "HEADDATA")
	raw, _ := importText(headData, "MATERIAL")
	material := strings.ToUpper(raw)
	if material == "" {
		return failedReturn("MG/138", "MATERIAL", "Enter a material number (HEADDATA-MATERIAL)"), nil
	}
	props := map[string]any{}
	if r := mapFields("CLIENTDATA", serviceProduct, importStruct(req.Imports, "CLIENTDATA"), fieldTarget{materialClientFields, props}); r != nil {
		return r, nil
	}
	type desc struct{ lang, text string }
	var descs []desc
	for name, rows := range req.Tables {
		if !strings.EqualFold(name, "MATERIALDESCRIPTION") {
			continue
		}
		for _, row := range rows {
			lang, _ := importText(row, "LANGU_ISO")
			if lang == "" {
				l, _ := importText(row, "LANGU")
				lang = isoOfKey(l)
			}
			text, _ := importText(row, "MATL_DESC")
			if lang == "" {
				return failedReturn("", "LANGU", "MATERIALDESCRIPTION needs LANGU or LANGU_ISO"), nil
			}
			descs = append(descs, desc{strings.ToUpper(lang), text})
		}
	}
	schema, err := b.schema(ctx, oc, serviceProduct)
	if err != nil {
		return odataErr(err)
	}
	for _, d := range descs {
		if err := schema.ValidateWrite("A_ProductDescription", odata.WriteCreate, map[string]any{"Product": material, "Language": d.lang, "ProductDescription": d.text}); err != nil {
			return odataErr(err)
		}
	}
	product, cur, err := b.findProduct(ctx, oc, material)
	if err != nil {
		return odataErr(err)
	}
	if cur == nil {
		typ, _ := importText(headData, "MATL_TYPE")
		ind, _ := importText(headData, "IND_SECTOR")
		if typ == "" || ind == "" {
			return failedReturn("M3/305", "", "The material %s does not exist; to create it give HEADDATA-MATL_TYPE and IND_SECTOR", material), nil
		}
		props["Product"], props["ProductType"], props["IndustrySector"] = product, typ, ind
		if err := schema.ValidateWrite("A_Product", odata.WriteCreate, props); err != nil {
			return odataErr(err)
		}
		if !req.Commit {
			return done(false, serviceProduct, "product %s", product), nil
		}
		if len(descs) > 0 {
			list := make([]any, 0, len(descs))
			for _, d := range descs {
				list = append(list, map[string]any{"Product": product, "Language": d.lang, "ProductDescription": d.text})
			}
			props["to_Description"] = map[string]any{"results": list}
		}
		if _, err := b.od.Create(ctx, oc, serviceProduct, "A_Product", props); err != nil {
			return odataErr(err)
		}
		return done(true, serviceProduct, "Material %s created", product), nil
	}
	var ops []odata.Op
	if len(props) > 0 {
		if err := schema.ValidateWrite("A_Product", odata.WriteUpdate, props); err != nil {
			return odataErr(err)
		}
		op, err := patchOp("A_Product"+odata.KeyPredicate(odata.KeyValue{Name: "Product", Value: product}), cur.ETag, props)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	for _, d := range descs {
		key := []odata.KeyValue{{Name: "Product", Value: product}, {Name: "Language", Value: d.lang}}
		e, err := b.od.Get(ctx, oc, serviceProduct, "A_ProductDescription", key)
		switch {
		case errors.Is(err, odata.ErrNotFound):
			body, jerr := jsonBody(map[string]any{"Product": product, "Language": d.lang, "ProductDescription": d.text})
			if jerr != nil {
				return nil, jerr
			}
			ops = append(ops, odata.Op{Method: http.MethodPost, Path: "A_ProductDescription", Header: http.Header{"Content-Type": {"application/json"}}, Body: body})
		case err != nil:
			return odataErr(err)
		default:
			op, err := patchOp("A_ProductDescription"+odata.KeyPredicate(key...), e.ETag, map[string]any{"ProductDescription": d.text})
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
		}
	}
	return b.write(ctx, oc, serviceProduct, ops, req.Commit, "No data was changed for material "+product,
		"the changes of material "+product, "Material "+product+" changed")
}

// findProduct reads A_Product by key. A number is tried as given and then ALPHA-padded (18
// digits, the classic MATNR, then the 40 of S/4HANA's long material number): which one a
// system stores depends on its material number settings. The key returned is the one that
// exists (or the input when none does).
func (b *Backend) findProduct(ctx context.Context, oc odata.Credentials, material string) (string, *odata.Entity, error) {
	tried := map[string]bool{}
	for _, cand := range []string{material, alphaPad(material, 18), alphaPad(material, 40)} {
		if tried[cand] {
			continue
		}
		tried[cand] = true
		e, err := b.od.Get(ctx, oc, serviceProduct, "A_Product", []odata.KeyValue{{Name: "Product", Value: cand}})
		if err == nil {
			return cand, &e, nil
		}
		if !errors.Is(err, odata.ErrNotFound) {
			return "", nil, err
		}
	}
	return material, nil, nil
}

// isoOfKey is the ISO code of SAP's one-letter language key (an ISO code stays as it is).
func isoOfKey(key string) string {
	key = strings.ToUpper(strings.TrimSpace(key))
	if len(key) != 1 {
		return key
	}
	for iso, k := range languageKeys {
		if k == key {
			return iso
		}
	}
	return ""
}
