package sapbackend

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// fakeSAP answers SOAP RFC (/sap/bc/soap/rfc) from hand-written envelopes and ADT from recorded
// files. It remembers every call: function module, user and SAP session.
type fakeSAP struct {
	t     *testing.T
	srv   *httptest.Server
	users map[string]string // user → password
	deny  map[string]bool   // tables RFC_READ_TABLE refuses with NOT_AUTHORIZED
	// unknownFM: RFC_GET_FUNCTION_INTERFACE answers FU_NOT_FOUND.
	unknownFM bool
	mu        sync.Mutex
	calls     []fakeCall
	n         int
}

type fakeCall struct {
	FM, User, Session, Body string
}

func newFakeSAP(t *testing.T) *fakeSAP {
	f := &fakeSAP{t: t, users: map[string]string{"SAPAGENT": "tech-Secret-1", "ALICE": "alice-Secret-2"}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

var (
	fmPattern    = regexp.MustCompile(`<urn:([A-Z0-9_-]+)[ >]`)
	tablePattern = regexp.MustCompile(`<QUERY_TABLE>([^<]*)</QUERY_TABLE>`)
)

func (f *fakeSAP) file(name string) []byte {
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.t.Fatal(err)
	}
	return raw
}

func (f *fakeSAP) serve(w http.ResponseWriter, r *http.Request) {
	user, pw, ok := r.BasicAuth()
	if !ok || f.users[user] != pw || pw == "" {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "<html><h1>Logon failed</h1></html>")
		return
	}
	switch {
	case r.URL.Path == "/sap/bc/soap/rfc":
		f.serveRFC(w, r, user)
	case r.URL.Path == "/sap/bc/adt/discovery":
		w.Header().Set("x-csrf-token", "token-1")
		w.Header().Set("Content-Type", "application/atomsvc+xml")
		_, _ = w.Write(f.file("discovery_e77.xml"))
	case r.URL.Path == "/sap/bc/adt/repository/informationsystem/search":
		f.record(fakeCall{FM: "ADT search " + r.URL.Query().Get("query"), User: user})
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write(f.file("search_quick_z_fn_hello_world.xml"))
	case r.URL.Path == "/sap/bc/adt/programs/programs/zapiadt_testcase_program1/source/main":
		f.record(fakeCall{FM: "ADT " + r.URL.Path, User: user})
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(f.file("program_zapiadt_testcase_program1_source.abap"))
	default:
		f.record(fakeCall{FM: "ADT " + r.URL.Path, User: user})
		http.NotFound(w, r)
	}
}

func (f *fakeSAP) record(c fakeCall) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
}

func (f *fakeSAP) callsTo(fm string) []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeCall
	for _, c := range f.calls {
		if c.FM == fm {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeSAP) serveRFC(w http.ResponseWriter, r *http.Request, user string) {
	raw, _ := io.ReadAll(r.Body)
	body := string(raw)
	m := fmPattern.FindStringSubmatch(body)
	if m == nil {
		http.Error(w, "no function in envelope", 500)
		return
	}
	fm := strings.ReplaceAll(m[1], "_-", "/")
	session := ""
	if ck, err := r.Cookie("SAP_SESSIONID_ECC_100"); err == nil {
		session = ck.Value
	} else {
		f.mu.Lock()
		f.n++
		session = fmt.Sprintf("sess-%d", f.n)
		f.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "SAP_SESSIONID_ECC_100", Value: session, Path: "/"})
	}
	f.record(fakeCall{FM: fm, User: user, Session: session, Body: body})
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	switch fm {
	case "DDIF_FIELDINFO_GET":
		if !strings.Contains(body, "<TABNAME>KNA1</TABNAME>") {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, fault(fm, "NOT_FOUND"))
			return
		}
		_, _ = w.Write(f.file("ddif_fieldinfo_get_kna1.response.xml"))
	case "BAPI_PO_CHANGE":
		_, _ = w.Write(f.file("bapi_po_change_success.response.xml"))
	case "BAPI_TRANSACTION_ROLLBACK":
		_, _ = w.Write(f.file("bapi_transaction_rollback.response.xml"))
	case "RFC_GET_FUNCTION_INTERFACE":
		f.mu.Lock()
		unknown := f.unknownFM
		f.mu.Unlock()
		if unknown {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, fault(fm, "FU_NOT_FOUND"))
			return
		}
		_, _ = w.Write(f.file("rfc_get_function_interface_bapi_po_change.response.xml"))
	case "BAPI_TRANSACTION_COMMIT":
		_, _ = w.Write(f.file("bapi_transaction_commit.response.xml"))
	case "RFC_SYSTEM_INFO":
		_, _ = io.WriteString(w, envelope(fm, `<RFCSI_EXPORT><RFCPROTO>011</RFCPROTO><RFCCHARTYP>4103</RFCCHARTYP>`+
			`<RFCHOST>eccapp01</RFCHOST><RFCSYSID>ECC</RFCSYSID><RFCDATABS>ECC</RFCDATABS><RFCDBHOST>eccdb01</RFCDBHOST>`+
			`<RFCDBSYS>HDB</RFCDBSYS><RFCSAPRL>750</RFCSAPRL></RFCSI_EXPORT>`))
	case "RFC_READ_TABLE":
		tm := tablePattern.FindStringSubmatch(body)
		table := ""
		if tm != nil {
			table = tm[1]
		}
		f.mu.Lock()
		denied := f.deny[table]
		f.mu.Unlock()
		if denied {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, fault(fm, "NOT_AUTHORIZED"))
			return
		}
		switch table {
		case "T000":
			_, _ = w.Write(f.file("rfc_read_table_t000.response.xml"))
		case "DD02L":
			_, _ = io.WriteString(w, readTable([]col{{"TABCLASS", 8}, {"CONTFLAG", 1}}, [][]string{{"TRANSP", "A"}}))
		case "DD02T":
			_, _ = io.WriteString(w, readTable([]col{{"DDTEXT", 60}}, [][]string{{"General Data in Customer Master"}}))
		case "TFDIR":
			switch {
			case sent(body, "FUNCNAME = 'BAPI_PO_CHANGE'"):
				_, _ = io.WriteString(w, readTable([]col{{"PNAME", 40}}, [][]string{{"SAPLMEWP"}}))
			case sent(body, "PNAME = 'SAPLZORDER' AND INCLUDE = '01'"):
				_, _ = io.WriteString(w, readTable([]col{{"FUNCNAME", 30}}, [][]string{{"Z_ORDER_POST"}}))
			default:
				_, _ = io.WriteString(w, readTable([]col{{"FUNCNAME", 30}}, nil))
			}
		case "WBCROSSGT":
			var rows [][]string
			if sent(body, "NAME = 'ZCL_ORDER'") {
				rows = [][]string{{"ZCL_ORDER_API==================CM001"}, {"ZCL_ORDER_API==================CU"},
					{"ZIF_ORDER_EVENTS===============IU"}, {"LZORDERU01"}, {"LZORDERF01"}, {"ZR_ORDER_REPORT"},
					{"ZCL_ORDER======================CCIMP"}}
			}
			_, _ = io.WriteString(w, readTable([]col{{"INCLUDE", 40}}, rows))
		case "CROSS":
			var rows [][]string
			if sent(body, "TYPE = 'F' AND NAME = 'Z_ORDER_POST'") {
				rows = [][]string{{"ZR_ORDER_REPORT"}, {"ZCL_ORDER_API==================CM002"}, {"/ACME/LSALESU01"}, {"LZORDERU01"}}
			}
			_, _ = io.WriteString(w, readTable([]col{{"INCLUDE", 40}}, rows))
		case "TFTIT":
			_, _ = io.WriteString(w, readTable([]col{{"STEXT", 74}}, [][]string{{"Change Purchase Order"}}))
		case "CVERS":
			_, _ = io.WriteString(w, readTable([]col{{"COMPONENT", 30}, {"RELEASE", 10}, {"EXTRELEASE", 10}},
				[][]string{{"SAP_BASIS", "750", "0025"}, {"SAP_ABA", "750", "0025"}, {"SAP_APPL", "618", "0020"}}))
		default:
			w.WriteHeader(500)
			_, _ = io.WriteString(w, fault(fm, "TABLE_NOT_AVAILABLE"))
		}
	default:
		w.WriteHeader(500)
		_, _ = io.WriteString(w, fault(fm, "FU_NOT_FOUND"))
	}
}

// sent reports whether the envelope carries text, with its quotes escaped or not.
func sent(body, text string) bool {
	return strings.Contains(body, text) || strings.Contains(body, strings.ReplaceAll(text, "'", "&#39;")) ||
		strings.Contains(body, strings.ReplaceAll(text, "'", "&apos;"))
}

type col struct {
	name string
	len  int
}

func envelope(fm, inner string) string {
	return `<?xml version="1.0" encoding="utf-8"?><soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/">` +
		`<soap-env:Header/><soap-env:Body><urn:` + fm + `.Response xmlns:urn="urn:sap-com:document:sap:rfc:functions">` +
		inner + `</urn:` + fm + `.Response></soap-env:Body></soap-env:Envelope>`
}

// readTable is an RFC_READ_TABLE answer without delimiter: fixed-width DATA lines and FIELDS.
func readTable(cols []col, rows [][]string) string {
	var data, fields strings.Builder
	off := 0
	for _, c := range cols {
		fmt.Fprintf(&fields, `<item><FIELDNAME>%s</FIELDNAME><OFFSET>%06d</OFFSET><LENGTH>%06d</LENGTH><TYPE>C</TYPE><FIELDTEXT>%s</FIELDTEXT></item>`, c.name, off, c.len, c.name)
		off += c.len
	}
	for _, r := range rows {
		data.WriteString("<item><WA>")
		for i, c := range cols {
			fmt.Fprintf(&data, "%-*s", c.len, r[i])
		}
		data.WriteString("</WA></item>")
	}
	return envelope("RFC_READ_TABLE", "<DATA>"+data.String()+"</DATA><FIELDS>"+fields.String()+"</FIELDS><OPTIONS/>")
}

func fault(fm, exc string) string {
	return `<?xml version="1.0" encoding="utf-8"?><soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body>` +
		`<soap-env:Fault><faultcode>soap-env:Client</faultcode><faultstring>` + exc + `</faultstring><detail>` +
		`<rfc:` + fm + `.Exception xmlns:rfc="urn:sap-com:document:sap:rfc:functions"><Name>` + exc + `</Name><Text>` + exc + `</Text></rfc:` + fm + `.Exception>` +
		`</detail></soap-env:Fault></soap-env:Body></soap-env:Envelope>`
}
