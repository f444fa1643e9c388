package sapsim

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sapagent/sapagent/internal/sap/odata"
)

// ODataPrefix is where SAP Gateway serves OData v2 services (SICF /default_host/sap/opu/odata).
// The simulator serves two S/4HANA released APIs per S/4HANA system under its ID:
// /<SID>/sap/opu/odata/sap/API_BUSINESS_PARTNER/… and …/API_PRODUCT_SRV/….
const ODataPrefix = "sap/opu/odata/sap/"

// odataState holds the CSRF tokens Gateway handed out, per user, and the address number
// range (lastAddr, guarded by the System's mu).
type odataState struct {
	mu       sync.Mutex
	tokens   map[string]string
	lastAddr int
}

// gwError is a Gateway error answer: status and SAP's {"error":{code,message,innererror}}.
type gwError struct {
	status        int
	code, message string
	property      string
}

func (e *gwError) Error() string { return e.message }

func gwErr(status int, code, format string, args ...any) *gwError {
	return &gwError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// entity is one entity's properties as text, by property name.
type entity map[string]string

// oProp is one property of an entity type; updatable false is sap:updatable="false".
type oProp struct {
	name, edm string
	maxLen    int
	label     string
	precision int
	scale     int
	readOnly  bool // neither creatable nor updatable
}

// oSet is one entity set with the entity type behind it. load lists the entities (callers hold
// s.mu); save turns a create (cur nil) or an update into staged changes.
type oSet struct {
	service, name, typeName, label string
	keys                           []string
	props                          []oProp
	creatable                      bool
	nav                            map[string]string // deep-insert navigation property → target set
	load                           func(s *System) []entity
	save                           func(s *System, cur, in entity, deep []entity) ([]change, *gwError)
}

func (o *oSet) prop(name string) (oProp, bool) {
	for _, p := range o.props {
		if p.name == name {
			return p, true
		}
	}
	return oProp{}, false
}

func str40(name, label string) oProp {
	return oProp{name: name, edm: "Edm.String", maxLen: 40, label: label}
}

// languageISO maps SAP's one-letter language keys onto the ISO codes the APIs take.
var languageISO = map[string]string{"E": "EN", "D": "DE", "F": "FR", "S": "ES", "I": "IT", "J": "JA", "P": "PT", "N": "NL"}

func languageKeyOf(iso string) string {
	for k, v := range languageISO {
		if strings.EqualFold(v, iso) {
			return k
		}
	}
	return ""
}

// odataSets are the simulated sets: property names, types and lengths as in SAP's published
// $metadata (internal/sap/odata/testdata/api_business_partner_metadata.xml); a subset of each type.
var odataSets = []*oSet{
	{service: "API_BUSINESS_PARTNER", name: "A_BusinessPartner", typeName: "A_BusinessPartnerType", label: "Business Partner", keys: []string{"BusinessPartner"}, creatable: true,
		nav: map[string]string{"to_BusinessPartnerAddress": "A_BusinessPartnerAddress", "to_Customer": "A_Customer", "to_BusinessPartnerRole": "A_BusinessPartnerRole"},
		props: []oProp{{name: "BusinessPartner", edm: "Edm.String", maxLen: 10, label: "Business Partner"},
			{name: "Customer", edm: "Edm.String", maxLen: 10, label: "Customer", readOnly: true},
			{name: "BusinessPartnerCategory", edm: "Edm.String", maxLen: 1, label: "BP Category"},
			{name: "BusinessPartnerFullName", edm: "Edm.String", maxLen: 81, readOnly: true},
			{name: "OrganizationBPName1", edm: "Edm.String", maxLen: 40, label: "Name 1"}},
		load: func(s *System) []entity {
			var out []entity
			for _, r := range s.tables["BUT000"].sortedRows() {
				e := entity{"BusinessPartner": r["PARTNER"], "BusinessPartnerCategory": r["BU_TYPE"], "BusinessPartnerFullName": r["NAME_ORG1"], "OrganizationBPName1": r["NAME_ORG1"]}
				if _, ok := s.tables["KNA1"].rows[r["PARTNER"]]; ok {
					e["Customer"] = r["PARTNER"] // CVI: the simulator's customers share the BP's number
				}
				out = append(out, e)
			}
			return out
		},
		save: func(s *System, cur, in entity, deep []entity) ([]change, *gwError) {
			if cur == nil {
				return createBusinessPartner(s, in, deep)
			}
			bp := map[string]string{"PARTNER": cur["BusinessPartner"]}
			cvi := map[string]string{"KUNNR": cur["BusinessPartner"]}
			if v, ok := in["OrganizationBPName1"]; ok {
				bp["NAME_ORG1"], cvi["NAME1"] = v, v
			}
			if v, ok := in["BusinessPartnerCategory"]; ok {
				if v != "1" && v != "2" && v != "3" {
					return nil, &gwError{status: http.StatusBadRequest, code: "R11/030", message: "BP category " + v + " is not valid", property: "BusinessPartnerCategory"}
				}
				bp["BU_TYPE"] = v
			}
			out := []change{{table: "BUT000", row: bp, what: "BUT000"}}
			if _, ok := s.tables["KNA1"].rows[cur["BusinessPartner"]]; ok && len(cvi) > 1 {
				out = append(out, change{table: "KNA1", row: cvi, what: "KNA1"}) // CVI keeps the customer in step
			}
			return out, nil
		}},
	{service: "API_BUSINESS_PARTNER", name: "A_BusinessPartnerAddress", typeName: "A_BusinessPartnerAddressType", label: "Address", keys: []string{"BusinessPartner", "AddressID"},
		props: []oProp{{name: "BusinessPartner", edm: "Edm.String", maxLen: 10, label: "Business Partner"},
			{name: "AddressID", edm: "Edm.String", maxLen: 10, label: "Address Number"},
			str40("CityName", "City"),
			{name: "Country", edm: "Edm.String", maxLen: 3, label: "Country/Region Key"},
			{name: "PostalCode", edm: "Edm.String", maxLen: 10, label: "Postal Code"},
			{name: "StreetName", edm: "Edm.String", maxLen: 60, label: "Street"}},
		load: func(s *System) []entity {
			var out []entity
			adrc := s.tables["ADRC"]
			for _, r := range s.tables["BUT020"].sortedRows() {
				a := adrc.rows[r["ADDRNUMBER"]+"\x0000010101"]
				out = append(out, entity{"BusinessPartner": r["PARTNER"], "AddressID": r["ADDRNUMBER"], "CityName": a["CITY1"], "Country": a["COUNTRY"],
					"PostalCode": a["POST_CODE1"], "StreetName": a["STREET"]})
			}
			return out
		},
		save: func(s *System, cur, in entity, _ []entity) ([]change, *gwError) {
			if cur == nil {
				return nil, gwErr(http.StatusMethodNotAllowed, "SAPSIM/405", "the simulator does not create addresses")
			}
			row := map[string]string{"ADDRNUMBER": cur["AddressID"], "DATE_FROM": "00010101"}
			cvi := map[string]string{"KUNNR": cur["BusinessPartner"]}
			for prop, cols := range map[string][2]string{"CityName": {"CITY1", "ORT01"}, "Country": {"COUNTRY", "LAND1"}, "PostalCode": {"POST_CODE1", "PSTLZ"}, "StreetName": {"STREET", "STRAS"}} {
				if v, ok := in[prop]; ok {
					row[cols[0]], cvi[cols[1]] = v, v
				}
			}
			if c := row["COUNTRY"]; c != "" {
				if _, ok := s.tables["T005"].rows[c]; !ok {
					return nil, &gwError{status: http.StatusBadRequest, code: "AM/215", message: "Country/Region " + c + " does not exist", property: "Country"}
				}
			}
			out := []change{{table: "ADRC", row: row, what: "ADRC"}}
			if _, ok := s.tables["KNA1"].rows[cur["BusinessPartner"]]; ok && len(cvi) > 1 {
				out = append(out, change{table: "KNA1", row: cvi, what: "KNA1"})
			}
			return out, nil
		}},
	{service: "API_BUSINESS_PARTNER", name: "A_Customer", typeName: "A_CustomerType", label: "Customer", keys: []string{"Customer"},
		props: []oProp{{name: "Customer", edm: "Edm.String", maxLen: 10, label: "Customer"},
			{name: "CustomerAccountGroup", edm: "Edm.String", maxLen: 4, label: "Account Group"},
			{name: "CustomerName", edm: "Edm.String", maxLen: 80, label: "Name of Customer", readOnly: true},
			{name: "VATRegistration", edm: "Edm.String", maxLen: 20, label: "VAT Registration No."}},
		load: func(s *System) []entity {
			var out []entity
			for _, r := range s.tables["KNA1"].sortedRows() {
				out = append(out, entity{"Customer": r["KUNNR"], "CustomerAccountGroup": r["KTOKD"], "CustomerName": r["NAME1"], "VATRegistration": r["STCEG"]})
			}
			return out
		},
		save: func(s *System, cur, in entity, _ []entity) ([]change, *gwError) {
			if cur == nil {
				return nil, gwErr(http.StatusMethodNotAllowed, "SAPSIM/405", "customers are created with their business partner (to_Customer)")
			}
			row := map[string]string{"KUNNR": cur["Customer"]}
			for prop, col := range map[string]string{"CustomerAccountGroup": "KTOKD", "VATRegistration": "STCEG"} {
				if v, ok := in[prop]; ok {
					row[col] = v
				}
			}
			return []change{{table: "KNA1", row: row, what: "KNA1"}}, nil
		}},
	{service: "API_BUSINESS_PARTNER", name: "A_BusinessPartnerRole", typeName: "A_BusinessPartnerRoleType", label: "Business Partner Role", keys: []string{"BusinessPartner", "BusinessPartnerRole"},
		props: []oProp{{name: "BusinessPartner", edm: "Edm.String", maxLen: 10, label: "Business Partner"},
			{name: "BusinessPartnerRole", edm: "Edm.String", maxLen: 6, label: "BP Role"}},
		load: func(s *System) []entity {
			var out []entity
			for _, r := range s.tables["KNA1"].sortedRows() {
				out = append(out, entity{"BusinessPartner": r["KUNNR"], "BusinessPartnerRole": "FLCU00"})
			}
			return out
		},
		save: func(*System, entity, entity, []entity) ([]change, *gwError) {
			return nil, gwErr(http.StatusMethodNotAllowed, "SAPSIM/405", "the simulator takes roles only in a business partner's deep insert")
		}},
	{service: "API_PRODUCT_SRV", name: "A_Product", typeName: "A_ProductType", label: "Product", keys: []string{"Product"}, creatable: true,
		nav: map[string]string{"to_Description": "A_ProductDescription"},
		props: []oProp{{name: "Product", edm: "Edm.String", maxLen: 40, label: "Product"},
			{name: "ProductType", edm: "Edm.String", maxLen: 4, label: "Product Type"},
			{name: "CreationDate", edm: "Edm.DateTime", precision: -1, label: "Created On", readOnly: true},
			{name: "CreatedByUser", edm: "Edm.String", maxLen: 12, label: "Created By", readOnly: true},
			{name: "LastChangeDate", edm: "Edm.DateTime", precision: -1, label: "Last Change", readOnly: true},
			{name: "GrossWeight", edm: "Edm.Decimal", precision: 13, scale: 3, label: "Gross Weight"},
			{name: "WeightUnit", edm: "Edm.String", maxLen: 3, label: "Weight Unit"},
			{name: "NetWeight", edm: "Edm.Decimal", precision: 13, scale: 3, label: "Net Weight"},
			{name: "ProductGroup", edm: "Edm.String", maxLen: 9, label: "Product Group"},
			{name: "BaseUnit", edm: "Edm.String", maxLen: 3, label: "Base Unit"},
			{name: "Division", edm: "Edm.String", maxLen: 2, label: "Division"},
			{name: "IndustrySector", edm: "Edm.String", maxLen: 1, label: "Industry Sector"}},
		load: func(s *System) []entity {
			var out []entity
			for _, r := range s.tables["MARA"].sortedRows() {
				e := entity{}
				for prop, col := range productCols {
					e[prop] = r[col]
				}
				out = append(out, e)
			}
			return out
		},
		save: saveProduct},
	{service: "API_PRODUCT_SRV", name: "A_ProductDescription", typeName: "A_ProductDescriptionType", label: "Product Description", keys: []string{"Product", "Language"}, creatable: true,
		props: []oProp{{name: "Product", edm: "Edm.String", maxLen: 40, label: "Product"},
			{name: "Language", edm: "Edm.String", maxLen: 2, label: "Language Key"},
			str40("ProductDescription", "Product Description")},
		load: func(s *System) []entity {
			var out []entity
			for _, r := range s.tables["MAKT"].sortedRows() {
				if iso := languageISO[r["SPRAS"]]; iso != "" {
					out = append(out, entity{"Product": r["MATNR"], "Language": iso, "ProductDescription": r["MAKTX"]})
				}
			}
			return out
		},
		save: func(s *System, cur, in entity, _ []entity) ([]change, *gwError) {
			return descriptionChange(s, cur, in)
		}},
}

// createBusinessPartner is the deep insert of an organization with its address and — CVI —
// its customer: BUT000, BUT020/ADRC and the KNA1 row the customer's fields reach. The
// simulator has no BP number range: BusinessPartner is given (external numbering) and the
// customer takes the same number, as with harmonized CVI number ranges.
func createBusinessPartner(s *System, in entity, deep []entity) ([]change, *gwError) {
	bp := in["BusinessPartner"]
	if bp == "" {
		return nil, &gwError{status: http.StatusBadRequest, code: "R11/401", message: "Enter a business partner number (the simulator numbers externally)", property: "BusinessPartner"}
	}
	if c := in["BusinessPartnerCategory"]; c != "2" {
		return nil, &gwError{status: http.StatusBadRequest, code: "R11/030", message: "BP category " + c + " is not valid here: the simulator creates organizations (2)", property: "BusinessPartnerCategory"}
	}
	if in["OrganizationBPName1"] == "" {
		return nil, &gwError{status: http.StatusBadRequest, code: "R11/112", message: "Enter a name for the organization", property: "OrganizationBPName1"}
	}
	var addrs, customers []entity
	customerRole := false
	for _, d := range deep {
		switch d[deepSet] {
		case "A_BusinessPartnerAddress":
			addrs = append(addrs, d)
		case "A_Customer":
			customers = append(customers, d)
		case "A_BusinessPartnerRole":
			customerRole = customerRole || strings.HasPrefix(d["BusinessPartnerRole"], "FLCU")
		}
	}
	if len(addrs) > 1 || len(customers) > 1 {
		return nil, gwErr(http.StatusBadRequest, "SAPSIM/400", "the simulator takes one address and one customer per business partner")
	}
	out := []change{{table: "BUT000", row: map[string]string{"PARTNER": bp, "BU_TYPE": "2", "NAME_ORG1": in["OrganizationBPName1"]}, what: "BUT000"}}
	kna1 := map[string]string{"KUNNR": bp, "NAME1": in["OrganizationBPName1"], "ERDAT": time.Now().UTC().Format("20060102"), "ERNAM": "SAPAGENT"}
	if len(addrs) == 1 {
		a := addrs[0]
		if a["Country"] == "" {
			return nil, &gwError{status: http.StatusBadRequest, code: "AM/216", message: "Enter a country/region for the address", property: "Country"}
		}
		if _, ok := s.tables["T005"].rows[a["Country"]]; !ok {
			return nil, &gwError{status: http.StatusBadRequest, code: "AM/215", message: "Country/Region " + a["Country"] + " does not exist", property: "Country"}
		}
		if s.odata.lastAddr == 0 {
			for _, r := range s.tables["BUT020"].sortedRows() {
				if n, err := strconv.Atoi(r["ADDRNUMBER"]); err == nil && n > s.odata.lastAddr {
					s.odata.lastAddr = n
				}
			}
		}
		s.odata.lastAddr++
		nr := pad(s.odata.lastAddr, 10)
		out = append(out, change{table: "BUT020", row: map[string]string{"PARTNER": bp, "ADDRNUMBER": nr}, what: "BUT020"},
			change{table: "ADRC", row: map[string]string{"ADDRNUMBER": nr, "DATE_FROM": "00010101", "STREET": a["StreetName"], "CITY1": a["CityName"], "POST_CODE1": a["PostalCode"], "COUNTRY": a["Country"]}, what: "ADRC"})
		kna1["LAND1"], kna1["ORT01"], kna1["PSTLZ"], kna1["STRAS"] = a["Country"], a["CityName"], a["PostalCode"], a["StreetName"]
	}
	if len(customers) == 1 {
		c := customers[0]
		if c["Customer"] != "" && c["Customer"] != bp {
			return nil, &gwError{status: http.StatusBadRequest, code: "CVI_EI/012", message: "Customer " + c["Customer"] + " differs from business partner " + bp + " (the simulator's CVI number ranges are harmonized)", property: "Customer"}
		}
		if !customerRole {
			return nil, gwErr(http.StatusBadRequest, "CVI_EI/001", "A customer needs a customer role (FLCU00 or FLCU01) in to_BusinessPartnerRole")
		}
		if _, ok := s.tables["KNA1"].rows[bp]; ok {
			return nil, gwErr(http.StatusBadRequest, "CVI_EI/010", "Customer %s already exists", bp)
		}
		kna1["KTOKD"], kna1["STCEG"] = c["CustomerAccountGroup"], c["VATRegistration"]
		out = append(out, change{table: "KNA1", row: kna1, what: "KNA1"}) // CVI
	}
	return out, nil
}

// productCols maps A_Product's properties onto MARA.
var productCols = map[string]string{"Product": "MATNR", "ProductType": "MTART", "CreationDate": "ERSDA", "CreatedByUser": "ERNAM", "LastChangeDate": "LAEDA",
	"GrossWeight": "BRGEW", "WeightUnit": "GEWEI", "NetWeight": "NTGEW", "ProductGroup": "MATKL", "BaseUnit": "MEINS", "Division": "SPART", "IndustrySector": "MBRSH"}

func saveProduct(s *System, cur, in entity, deep []entity) ([]change, *gwError) {
	today := time.Now().UTC().Format("20060102")
	row := map[string]string{}
	if cur == nil {
		m := in["Product"]
		if m == "" {
			return nil, &gwError{status: http.StatusBadRequest, code: "MG/138", message: "Enter a product number", property: "Product"}
		}
		if _, ok := s.tables["MARA"].rows[m]; ok {
			return nil, gwErr(http.StatusBadRequest, "M3/302", "Product %s already exists", m)
		}
		if in["ProductType"] == "" || in["IndustrySector"] == "" {
			return nil, &gwError{status: http.StatusBadRequest, code: "MG/129", message: "Enter ProductType and IndustrySector to create a product", property: "ProductType"}
		}
		row["ERSDA"], row["ERNAM"] = today, "SAPAGENT"
		if in["BaseUnit"] == "" {
			row["MEINS"] = "ST"
		}
	} else {
		row["MATNR"], row["LAEDA"] = cur["Product"], today
	}
	mara := s.tables["MARA"]
	for prop, v := range in {
		col := productCols[prop]
		fd, _ := mara.field(col)
		if why := s.validate(mara, fd, v); why != "" {
			return nil, &gwError{status: http.StatusBadRequest, code: "MG/150", message: prop + ": " + why, property: prop}
		}
		row[col] = v
	}
	out := []change{{table: "MARA", row: row, what: "MARA"}}
	for _, d := range deep {
		d["Product"] = row["MATNR"]
		cs, err := descriptionChange(s, nil, d)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

func descriptionChange(s *System, cur, in entity) ([]change, *gwError) {
	key := cur
	if key == nil {
		key = in
	}
	lang := languageKeyOf(key["Language"])
	if lang == "" {
		return nil, &gwError{status: http.StatusBadRequest, code: "SAPSIM/400", message: "Language " + key["Language"] + " is not an ISO language code the system knows", property: "Language"}
	}
	return []change{{table: "MAKT", what: "MAKT", row: map[string]string{"MATNR": key["Product"], "SPRAS": lang, "MAKTX": in["ProductDescription"]}}}, nil
}

func (s *System) odataSet(service, name string) *oSet {
	for _, o := range odataSets {
		if o.service == service && o.name == name {
			return o
		}
	}
	return nil
}

// etagOf is a weak ETag over the entity's properties: any change gives a new one.
func etagOf(e entity) string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\x00", k, e[k])
	}
	return `W/"'` + hex.EncodeToString(h.Sum(nil))[:20] + `'"`
}

// serveOData answers one OData request: rest is <SERVICE>/<resource path>.
func (s *System) serveOData(w http.ResponseWriter, r *http.Request, rest string) {
	s.init()
	u, ok := s.icfLogon(w, r)
	if !ok {
		return
	}
	if err := s.fault(r.Context()); err != nil {
		writeGW(w, gwErr(http.StatusServiceUnavailable, "/IWFND/CM_BEC/026", "%v", err))
		return
	}
	service, resource, _ := strings.Cut(rest, "/")
	if s.info.SystemType != "S4HANA" || (service != "API_BUSINESS_PARTNER" && service != "API_PRODUCT_SRV") {
		writeGW(w, gwErr(http.StatusNotFound, "/IWFND/MED/170", "No service found for namespace '/SAP/', name '%s', version '0001'", service))
		return
	}
	// CSRF: a GET with x-csrf-token: Fetch gets the user's token; every other method must send it.
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if strings.EqualFold(r.Header.Get("X-Csrf-Token"), "fetch") {
			w.Header().Set("X-Csrf-Token", s.csrfToken(u.name, true))
		}
	} else if tok := r.Header.Get("X-Csrf-Token"); tok == "" || tok != s.csrfToken(u.name, false) {
		w.Header().Set("X-Csrf-Token", "Required")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "CSRF token validation failed")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		writeGW(w, gwErr(http.StatusBadRequest, "SAPSIM/400", "the request body is unreadable or larger than 8 MiB"))
		return
	}
	base := "http://" + r.Host + strings.TrimSuffix(r.URL.Path, resource)
	if resource == "$batch" && r.Method == http.MethodPost {
		s.odataBatch(w, u, service, base, r.Header.Get("Content-Type"), body)
		return
	}
	res := s.odataOp(u, service, base, r.Method, resource, r.URL.Query(), r.Header, body)
	res.write(w)
}

// csrfToken returns the user's token, making one when asked to.
func (s *System) csrfToken(user string, create bool) string {
	s.odata.mu.Lock()
	defer s.odata.mu.Unlock()
	if s.odata.tokens == nil {
		s.odata.tokens = map[string]string{}
	}
	tok := s.odata.tokens[user]
	if tok == "" && create {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		tok = strings.ToUpper(hex.EncodeToString(b))
		s.odata.tokens[user] = tok
	}
	return tok
}

// opResult is the answer to one request, alone or inside a $batch.
type opResult struct {
	status int
	header http.Header
	body   []byte
}

func (o opResult) write(w http.ResponseWriter) {
	for k, vs := range o.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(o.status)
	_, _ = w.Write(o.body)
}

func gwResult(e *gwError) opResult {
	detail := map[string]any{"code": e.code, "message": e.message, "propertyref": e.property, "severity": "error", "target": e.property}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": e.code, "message": map[string]any{"lang": "en", "value": e.message},
		"innererror": map[string]any{"application": map[string]any{"component_id": "", "service_namespace": "/SAP/", "service_id": "", "service_version": "0001"},
			"transactionid": strings.ToUpper(hex.EncodeToString(randBytes(16))), "timestamp": time.Now().UTC().Format("20060102150405.0000000"),
			"errordetails": []any{detail}}}})
	return opResult{status: e.status, header: http.Header{"Content-Type": {"application/json;charset=utf-8"}}, body: b}
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func writeGW(w http.ResponseWriter, e *gwError) { gwResult(e).write(w) }

func jsonResult(status int, v any, etag string) opResult {
	b, _ := json.Marshal(v)
	h := http.Header{"Content-Type": {"application/json;charset=utf-8"}, "Dataserviceversion": {"2.0"}}
	if etag != "" {
		h.Set("ETag", etag)
	}
	return opResult{status: status, header: h, body: b}
}

// odataOp runs one request. Writes are applied at once (a request is its own unit of work).
func (s *System) odataOp(u user, service, base, method, resource string, q url.Values, h http.Header, body []byte) opResult {
	if resource == "" {
		if method != http.MethodGet && method != http.MethodHead {
			return gwResult(gwErr(http.StatusMethodNotAllowed, "SAPSIM/405", "the service document takes GET"))
		}
		return jsonResult(http.StatusOK, map[string]any{"d": map[string]any{"EntitySets": s.setNames(service)}}, "")
	}
	if resource == "$metadata" {
		return opResult{status: http.StatusOK, header: http.Header{"Content-Type": {"application/xml"}}, body: metadataXML(service)}
	}
	name, pred, hasKey := strings.Cut(resource, "(")
	set := s.odataSet(service, name)
	if set == nil {
		return gwResult(gwErr(http.StatusNotFound, "/IWBEP/CM_MGW_RT/021", "Resource not found for segment '%s'", name))
	}
	var key entity
	if hasKey {
		k, err := parseKey(set, strings.TrimSuffix(pred, ")"))
		if err != nil {
			return gwResult(gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/004", "Invalid key predicate: %v", err))
		}
		key = k
	}
	switch method {
	case http.MethodGet:
		s.mu.RLock()
		defer s.mu.RUnlock()
		if key != nil {
			e := findEntity(s, set, key)
			if e == nil {
				return gwResult(gwErr(http.StatusNotFound, "/IWBEP/CM_MGW_RT/021", "Resource not found for segment '%s'", resource))
			}
			return jsonResult(http.StatusOK, map[string]any{"d": set.json(base, e, nil)}, etagOf(e))
		}
		return s.odataList(set, base, q)
	case http.MethodPatch, "MERGE", http.MethodPut:
		if key == nil {
			return gwResult(gwErr(http.StatusMethodNotAllowed, "SAPSIM/405", "%s needs a key", method))
		}
		in, gerr := set.decode(body, false)
		if gerr != nil {
			return gwResult(gerr)
		}
		if u.restricted {
			return gwResult(gwErr(http.StatusForbidden, "CM_BUPA_AUTH/000", "No authorization to change %s %s (user %s)", set.label, strings.Join(keyValues(set, key), "/"), u.name))
		}
		ifMatch := h.Get("If-Match")
		if ifMatch == "" {
			return gwResult(gwErr(http.StatusPreconditionRequired, "/IWBEP/CM_MGW_RT/148", "The If-Match header is required"))
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		cur := findEntity(s, set, key)
		if cur == nil {
			return gwResult(gwErr(http.StatusNotFound, "/IWBEP/CM_MGW_RT/021", "Resource not found for segment '%s'", resource))
		}
		if ifMatch != "*" && ifMatch != etagOf(cur) {
			return gwResult(gwErr(http.StatusPreconditionFailed, "/IWBEP/CM_MGW_RT/022", "The entity was changed by someone else since it was read (ETag mismatch)"))
		}
		changes, gerr := set.save(s, cur, in, nil)
		if gerr != nil {
			return gwResult(gerr)
		}
		s.apply(changes, u)
		now := findEntity(s, set, key)
		return opResult{status: http.StatusNoContent, header: http.Header{"ETag": {etagOf(now)}, "Dataserviceversion": {"1.0"}}}
	case http.MethodPost:
		if key != nil || !set.creatable {
			return gwResult(gwErr(http.StatusMethodNotAllowed, "SAPSIM/405", "%s does not take POST here", resource))
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		res, changes := s.odataCreateLocked(u, set, base, body)
		if res.status >= 400 {
			return res
		}
		s.apply(changes, u)
		key := entity{}
		in, _ := set.decode(body, true)
		for _, k := range set.keys {
			key[k] = in[k]
		}
		e := findEntity(s, set, key)
		return jsonResult(http.StatusCreated, map[string]any{"d": set.json(base, e, nil)}, etagOf(e))
	}
	return gwResult(gwErr(http.StatusMethodNotAllowed, "SAPSIM/405", "method %s is not supported", method))
}

// odataCreateLocked checks a create and returns its staged changes with the answer SAP gives
// (the entity as sent; callers hold s.mu and apply the changes).
func (s *System) odataCreateLocked(u user, set *oSet, base string, body []byte) (opResult, []change) {
	in, gerr := set.decode(body, true)
	if gerr != nil {
		return gwResult(gerr), nil
	}
	deep, gerr := deepEntities(s, set, body)
	if gerr != nil {
		return gwResult(gerr), nil
	}
	if u.restricted {
		return gwResult(gwErr(http.StatusForbidden, "CM_BUPA_AUTH/000", "No authorization to create %s (user %s)", set.label, u.name)), nil
	}
	key := entity{}
	for _, k := range set.keys {
		key[k] = in[k]
	}
	if findEntity(s, set, key) != nil {
		return gwResult(gwErr(http.StatusBadRequest, "SAPSIM/409", "%s %s already exists", set.label, strings.Join(keyValues(set, key), "/"))), nil
	}
	if set.name == "A_ProductDescription" {
		if _, ok := s.tables["MARA"].rows[in["Product"]]; !ok {
			return gwResult(&gwError{status: http.StatusBadRequest, code: "M3/305", message: "Product " + in["Product"] + " does not exist", property: "Product"}), nil
		}
	}
	changes, gerr := set.save(s, nil, in, deep)
	if gerr != nil {
		return gwResult(gerr), nil
	}
	return jsonResult(http.StatusCreated, map[string]any{"d": set.json(base, in, nil)}, etagOf(in)), changes
}

func (s *System) setNames(service string) []string {
	var out []string
	for _, o := range odataSets {
		if o.service == service {
			out = append(out, o.name)
		}
	}
	return out
}

func keyValues(set *oSet, key entity) []string {
	out := make([]string, len(set.keys))
	for i, k := range set.keys {
		out[i] = key[k]
	}
	return out
}

// parseKey reads 'v' or A='v',B='w' (quotes doubled inside a literal).
func parseKey(set *oSet, pred string) (entity, error) {
	key := entity{}
	rest := pred
	for i := 0; rest != ""; i++ {
		name := ""
		if !strings.HasPrefix(rest, "'") {
			n, after, ok := strings.Cut(rest, "=")
			if !ok {
				return nil, fmt.Errorf("%q", pred)
			}
			name, rest = strings.TrimSpace(n), after
		} else if len(set.keys) == 1 && i == 0 {
			name = set.keys[0]
		}
		v, after, err := cutLiteral(rest)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", pred, err)
		}
		key[name] = v
		rest = strings.TrimPrefix(strings.TrimSpace(after), ",")
	}
	for _, k := range set.keys {
		if _, ok := key[k]; !ok {
			return nil, fmt.Errorf("%q: key property %s missing", pred, k)
		}
	}
	if len(key) != len(set.keys) {
		return nil, fmt.Errorf("%q: the key of %s is %s", pred, set.name, strings.Join(set.keys, ","))
	}
	return key, nil
}

// cutLiteral reads the string literal at the start of s ('…', quotes doubled inside) and
// returns its value and what follows it.
func cutLiteral(s string) (value, rest string, err error) {
	if !strings.HasPrefix(s, "'") {
		return "", "", errors.New("values are string literals ('…')")
	}
	var b strings.Builder
	for j := 1; j < len(s); j++ {
		if s[j] != '\'' {
			b.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == '\'' {
			b.WriteByte('\'')
			j++
			continue
		}
		return b.String(), s[j+1:], nil
	}
	return "", "", errors.New("unterminated literal")
}

func findEntity(s *System, set *oSet, key entity) entity {
	for _, e := range set.load(s) {
		match := true
		for _, k := range set.keys {
			if e[k] != key[k] {
				match = false
				break
			}
		}
		if match {
			return e
		}
	}
	return nil
}

// decode reads a JSON entity body: known properties only, strings (numbers for decimals), within
// MaxLength; read-only properties and, on update, key properties are refused.
func (o *oSet) decode(body []byte, create bool) (entity, *gwError) {
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/003", "The request body is not valid JSON: %v", err)
	}
	in := entity{}
	for name, v := range raw {
		if name == "__metadata" || strings.HasPrefix(name, "to_") {
			continue
		}
		p, ok := o.prop(name)
		if !ok {
			return nil, &gwError{status: http.StatusBadRequest, code: "/IWBEP/CM_MGW_RT/020", message: fmt.Sprintf("Property '%s' is invalid", name), property: name}
		}
		if p.readOnly || (!create && contains(o.keys, name)) {
			return nil, &gwError{status: http.StatusBadRequest, code: "/IWBEP/CM_MGW_RT/020", message: fmt.Sprintf("Property '%s' cannot be changed", name), property: name}
		}
		var txt string
		switch x := v.(type) {
		case string:
			txt = x
		case float64:
			if p.edm != "Edm.Decimal" {
				return nil, &gwError{status: http.StatusBadRequest, code: "/IWBEP/CM_MGW_RT/020", message: fmt.Sprintf("Property '%s' takes a string", name), property: name}
			}
			txt = strconv.FormatFloat(x, 'f', -1, 64)
		case nil:
		default:
			return nil, &gwError{status: http.StatusBadRequest, code: "/IWBEP/CM_MGW_RT/020", message: fmt.Sprintf("Property '%s' has a value of the wrong type", name), property: name}
		}
		if p.maxLen > 0 && len([]rune(txt)) > p.maxLen {
			return nil, &gwError{status: http.StatusBadRequest, code: "/IWBEP/CM_MGW_RT/020", message: fmt.Sprintf("Property '%s' is longer than %d characters", name, p.maxLen), property: name}
		}
		in[name] = txt
	}
	return in, nil
}

// deepSet tags a deep-insert entity with the set it belongs to.
const deepSet = "\x00set"

// deepEntities reads the deep insert of a create: each navigation property of the set as
// {"results":[…]}, a list or one object, decoded against its target set.
func deepEntities(s *System, set *oSet, body []byte) ([]entity, *gwError) {
	if len(set.nav) == 0 {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &raw) != nil {
		return nil, nil // decode reports the body
	}
	navs := make([]string, 0, len(set.nav))
	for n := range set.nav {
		navs = append(navs, n)
	}
	sort.Strings(navs)
	var out []entity
	for _, nav := range navs {
		data, ok := raw[nav]
		if !ok || string(data) == "null" {
			continue
		}
		var list []json.RawMessage
		var wrapped struct {
			Results []json.RawMessage `json:"results"`
		}
		switch {
		case json.Unmarshal(data, &wrapped) == nil && wrapped.Results != nil:
			list = wrapped.Results
		case json.Unmarshal(data, &list) == nil:
		case strings.HasPrefix(strings.TrimSpace(string(data)), "{"):
			list = []json.RawMessage{data}
		default:
			return nil, gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/003", "%s must be an entity or a list of entities", nav)
		}
		target := s.odataSet(set.service, set.nav[nav])
		for _, d := range list {
			e, gerr := target.decode(d, true)
			if gerr != nil {
				return nil, gerr
			}
			e[deepSet] = target.name
			out = append(out, e)
		}
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// json renders an entity as Gateway does: __metadata first, then the selected properties.
func (o *oSet) json(base string, e entity, sel map[string]bool) map[string]any {
	var pred string
	if len(o.keys) == 1 {
		pred = "('" + strings.ReplaceAll(e[o.keys[0]], "'", "''") + "')"
	} else {
		parts := make([]string, len(o.keys))
		for i, k := range o.keys {
			parts[i] = k + "='" + strings.ReplaceAll(e[k], "'", "''") + "'"
		}
		pred = "(" + strings.Join(parts, ",") + ")"
	}
	uri := base + o.name + pred
	out := map[string]any{"__metadata": map[string]any{"id": uri, "uri": uri, "type": o.service + "." + o.typeName, "etag": etagOf(e)}}
	for _, p := range o.props {
		if sel != nil && !sel[p.name] {
			continue
		}
		out[p.name] = jsonValue(p, e[p.name])
	}
	return out
}

// jsonValue writes Edm.DateTime as /Date(ms)/ (null when empty) and the rest as strings, as
// OData v2 JSON does (decimals too).
func jsonValue(p oProp, v string) any {
	if p.edm == "Edm.DateTime" {
		t, err := time.Parse("20060102", v)
		if err != nil {
			return nil
		}
		return "/Date(" + strconv.FormatInt(t.UnixMilli(), 10) + ")/"
	}
	return v
}

// odataList answers a set read: $filter with eq (joined by and), $select, $top, $skip,
// $inlinecount=allpages.
func (s *System) odataList(set *oSet, base string, q url.Values) opResult {
	conds, err := parseFilter(set, q.Get("$filter"))
	if err != nil {
		return gwResult(gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/004", "Invalid filter expression: %v", err))
	}
	var sel map[string]bool
	if v := q.Get("$select"); v != "" {
		sel = map[string]bool{}
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if _, ok := set.prop(f); !ok {
				return gwResult(gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/020", "Property '%s' is invalid in $select", f))
			}
			sel[f] = true
		}
	}
	top, skip := -1, 0
	for opt, dst := range map[string]*int{"$top": &top, "$skip": &skip} {
		if v := q.Get(opt); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return gwResult(gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/004", "Invalid value %q of %s", v, opt))
			}
			*dst = n
		}
	}
	var match []entity
	for _, e := range set.load(s) {
		ok := true
		for k, v := range conds {
			if e[k] != v {
				ok = false
				break
			}
		}
		if ok {
			match = append(match, e)
		}
	}
	total := len(match)
	match = match[min(skip, len(match)):]
	if top >= 0 && top < len(match) {
		match = match[:top]
	}
	results := make([]any, 0, len(match))
	for _, e := range match {
		results = append(results, set.json(base, e, sel))
	}
	d := map[string]any{"results": results}
	if q.Get("$inlinecount") == "allpages" {
		d["__count"] = strconv.Itoa(total)
	}
	return jsonResult(http.StatusOK, map[string]any{"d": d}, "")
}

// parseFilter reads Prop eq 'v' [and Prop eq 'w' …].
func parseFilter(set *oSet, f string) (map[string]string, error) {
	out := map[string]string{}
	f = strings.TrimSpace(f)
	for f != "" {
		name, rest, ok := strings.Cut(f, " eq ")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, fmt.Errorf("only Property eq 'value' (joined by and) is supported: %q", f)
		}
		if _, known := set.prop(name); !known {
			return nil, fmt.Errorf("property %s is not in %s", name, set.typeName)
		}
		v, after, err := cutLiteral(strings.TrimSpace(rest))
		if err != nil {
			return nil, fmt.Errorf("the value of %s: %v", name, err)
		}
		out[name] = v
		f = strings.TrimSpace(after)
		if f != "" {
			after, ok := strings.CutPrefix(f, "and ")
			if !ok {
				return nil, fmt.Errorf("expected and, got %q", f)
			}
			f = strings.TrimSpace(after)
		}
	}
	return out, nil
}

// metadataXML renders the service's $metadata with the element and attribute structure of
// SAP's published EDMX (edmx:Edmx / edmx:DataServices / Schema / EntityType / EntityContainer).
func metadataXML(service string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<edmx:Edmx Version="1.0" xmlns:edmx="http://schemas.microsoft.com/ado/2007/06/edmx" xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata" xmlns:sap="http://www.sap.com/Protocols/SAPData">` + "\n")
	b.WriteString(` <edmx:DataServices m:DataServiceVersion="2.0">` + "\n")
	fmt.Fprintf(&b, `  <Schema Namespace="%s" xml:lang="en" sap:schema-version="1" xmlns="http://schemas.microsoft.com/ado/2008/09/edm">`+"\n", service)
	var sets []*oSet
	for _, o := range odataSets {
		if o.service != service {
			continue
		}
		sets = append(sets, o)
		fmt.Fprintf(&b, `   <EntityType Name="%s" sap:label="%s" sap:content-version="1">`+"\n    <Key>\n", o.typeName, o.label)
		for _, k := range o.keys {
			fmt.Fprintf(&b, `     <PropertyRef Name="%s"/>`+"\n", k)
		}
		b.WriteString("    </Key>\n")
		for _, p := range o.props {
			fmt.Fprintf(&b, `    <Property Name="%s" Type="%s"`, p.name, p.edm)
			if contains(o.keys, p.name) {
				b.WriteString(` Nullable="false"`)
			}
			if p.maxLen > 0 {
				fmt.Fprintf(&b, ` MaxLength="%d"`, p.maxLen)
			}
			switch {
			case p.precision < 0:
				b.WriteString(` Precision="0" sap:display-format="Date"`)
			case p.precision > 0:
				fmt.Fprintf(&b, ` Precision="%d" Scale="%d"`, p.precision, p.scale)
			}
			if p.label != "" {
				fmt.Fprintf(&b, ` sap:label="%s"`, p.label)
			}
			if p.readOnly {
				b.WriteString(` sap:creatable="false" sap:updatable="false"`)
			}
			b.WriteString("/>\n")
		}
		b.WriteString("   </EntityType>\n")
	}
	fmt.Fprintf(&b, `   <EntityContainer Name="%s_Entities" m:IsDefaultEntityContainer="true" sap:supported-formats="atom json xlsx">`+"\n", service)
	for _, o := range sets {
		fmt.Fprintf(&b, `    <EntitySet Name="%s" EntityType="%s.%s"`, o.name, service, o.typeName)
		if !o.creatable {
			b.WriteString(` sap:creatable="false"`)
		}
		b.WriteString(` sap:deletable="false" sap:content-version="1"/>` + "\n")
	}
	b.WriteString("   </EntityContainer>\n")
	fmt.Fprintf(&b, `   <atom:link rel="self" href="https://host:port/sap/opu/odata/sap/%s/$metadata" xmlns:atom="http://www.w3.org/2005/Atom"/>`+"\n", service)
	b.WriteString("  </Schema>\n </edmx:DataServices>\n</edmx:Edmx>\n")
	return b.Bytes()
}

// batchOp is one request read from a $batch body.
type batchOp struct {
	method, resource string
	query            url.Values
	header           http.Header
	body             []byte
}

// odataBatch answers a $batch: reads run alone; a changeset's writes are checked against the
// state before it and applied together, or none of them (SAP then answers the changeset with
// the failing request's error alone).
func (s *System) odataBatch(w http.ResponseWriter, u user, service, base, contentType string, body []byte) {
	boundary, err := multipartBoundary(contentType)
	if err != nil {
		writeGW(w, gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/003", "$batch: %v", err))
		return
	}
	var out bytes.Buffer
	outB := "batchresponse_" + hex.EncodeToString(randBytes(8))
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			writeGW(w, gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/003", "$batch: %v", err))
			return
		}
		ct := part.Header.Get("Content-Type")
		fmt.Fprintf(&out, "--%s\r\n", outB)
		if strings.HasPrefix(strings.ToLower(ct), "multipart/mixed") {
			data, _ := io.ReadAll(part)
			ops, err := readChangeset(ct, data)
			if err != nil {
				writeGW(w, gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/003", "$batch changeset: %v", err))
				return
			}
			results := s.odataChangeset(u, service, base, ops)
			if len(results) == 1 && results[0].status >= 400 {
				writeEmbedded(&out, results[0])
				continue
			}
			csB := "changesetresponse_" + hex.EncodeToString(randBytes(8))
			fmt.Fprintf(&out, "Content-Type: multipart/mixed; boundary=%s\r\n\r\n", csB)
			for _, r := range results {
				fmt.Fprintf(&out, "--%s\r\n", csB)
				writeEmbedded(&out, r)
			}
			fmt.Fprintf(&out, "--%s--\r\n\r\n", csB)
			continue
		}
		op, err := readOp(part)
		if err != nil || op.method != http.MethodGet {
			writeEmbedded(&out, gwResult(gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/003", "a $batch request outside a changeset must be a GET")))
			continue
		}
		writeEmbedded(&out, s.odataOp(u, service, base, op.method, op.resource, op.query, op.header, op.body))
	}
	fmt.Fprintf(&out, "--%s--\r\n", outB)
	w.Header().Set("Content-Type", "multipart/mixed; boundary="+outB)
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write(out.Bytes())
}

// odataChangeset runs the changeset's writes under one lock: each is checked (ETag, values)
// and staged; the staged changes are applied only when all passed.
func (s *System) odataChangeset(u user, service, base string, ops []batchOp) []opResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	var staged []change
	var results []opResult
	for _, op := range ops {
		name, pred, hasKey := strings.Cut(op.resource, "(")
		set := s.odataSet(service, name)
		if set != nil && !hasKey && op.method == http.MethodPost && set.creatable {
			res, cs := s.odataCreateLocked(u, set, base, op.body)
			if res.status >= 400 {
				return []opResult{res}
			}
			staged = append(staged, cs...)
			results = append(results, res)
			continue
		}
		if set == nil || !hasKey || (op.method != http.MethodPatch && op.method != "MERGE" && op.method != http.MethodPut) {
			return []opResult{gwResult(gwErr(http.StatusBadRequest, "SAPSIM/400", "the simulator's changesets take creates and updates by key; %s %s is neither", op.method, op.resource))}
		}
		key, err := parseKey(set, strings.TrimSuffix(pred, ")"))
		if err != nil {
			return []opResult{gwResult(gwErr(http.StatusBadRequest, "/IWBEP/CM_MGW_RT/004", "Invalid key predicate: %v", err))}
		}
		in, gerr := set.decode(op.body, false)
		if gerr != nil {
			return []opResult{gwResult(gerr)}
		}
		if u.restricted {
			return []opResult{gwResult(gwErr(http.StatusForbidden, "CM_BUPA_AUTH/000", "No authorization to change %s (user %s)", set.label, u.name))}
		}
		cur := findEntity(s, set, key)
		switch im := op.header.Get("If-Match"); {
		case cur == nil:
			return []opResult{gwResult(gwErr(http.StatusNotFound, "/IWBEP/CM_MGW_RT/021", "Resource not found for segment '%s'", op.resource))}
		case im == "":
			return []opResult{gwResult(gwErr(http.StatusPreconditionRequired, "/IWBEP/CM_MGW_RT/148", "The If-Match header is required"))}
		case im != "*" && im != etagOf(cur):
			return []opResult{gwResult(gwErr(http.StatusPreconditionFailed, "/IWBEP/CM_MGW_RT/022", "The entity was changed by someone else since it was read (ETag mismatch)"))}
		}
		cs, gerr := set.save(s, cur, in, nil)
		if gerr != nil {
			return []opResult{gwResult(gerr)}
		}
		staged = append(staged, cs...)
		results = append(results, opResult{status: http.StatusNoContent, header: http.Header{}})
	}
	s.apply(staged, u)
	return results
}

func multipartBoundary(ct string) (string, error) {
	b, ok := odata.MultipartBoundary(ct)
	if !ok {
		return "", fmt.Errorf("Content-Type %q is not multipart/mixed with a boundary", ct)
	}
	return b, nil
}

func readChangeset(ct string, data []byte) ([]batchOp, error) {
	boundary, err := multipartBoundary(ct)
	if err != nil {
		return nil, err
	}
	var ops []batchOp
	mr := multipart.NewReader(bytes.NewReader(data), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return ops, nil
		}
		if err != nil {
			return nil, err
		}
		op, err := readOp(part)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
}

// readOp reads "METHOD resource HTTP/1.1", headers and body of an application/http part.
func readOp(r io.Reader) (batchOp, error) {
	tp := textproto.NewReader(bufio.NewReader(r))
	line, err := tp.ReadLine()
	if err != nil {
		return batchOp{}, err
	}
	f := strings.Fields(line)
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/") {
		return batchOp{}, fmt.Errorf("bad request line %q", line)
	}
	mh, err := tp.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return batchOp{}, err
	}
	body, _ := io.ReadAll(tp.R)
	res, rawQ, _ := strings.Cut(f[1], "?")
	res, _ = url.PathUnescape(res)
	q, _ := url.ParseQuery(rawQ)
	return batchOp{method: f[0], resource: res, query: q, header: http.Header(mh), body: bytes.TrimRight(body, "\r\n")}, nil
}

func writeEmbedded(out *bytes.Buffer, r opResult) {
	out.WriteString("Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
	fmt.Fprintf(out, "HTTP/1.1 %d %s\r\n", r.status, http.StatusText(r.status))
	if len(r.body) > 0 {
		r.header.Set("Content-Length", strconv.Itoa(len(r.body)))
	}
	_ = r.header.Write(out)
	out.WriteString("\r\n")
	out.Write(r.body)
	out.WriteString("\r\n")
}
