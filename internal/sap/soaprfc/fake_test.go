package soaprfc

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeSAP answers /sap/bc/soap/rfc like an ABAP system: static answers from testdata files
// (hand-written in SAP's documented format, see testdata/SOURCES.md) and generated
// RFC_READ_TABLE / DDIF_FIELDINFO_GET answers for large or wide test tables.
type fakeSAP struct {
	t        testing.TB
	srv      *httptest.Server
	mu       sync.Mutex
	calls    []fakeCall
	files    map[string]string // function module → testdata file
	tables   map[string]*fakeTable
	sessions int
}

type fakeCall struct {
	FM      string
	Session string
	In      *Result
	Header  http.Header
	Query   url.Values
}

type fakeCol struct {
	Name string
	Len  int
	Key  bool
	Conv string
}

type fakeTable struct {
	Cols []fakeCol
	Rows int
	// Value of column col in row i (before padding).
	Value func(i int, col string) string
}

const (
	testUser     = "DEVELOPER"
	testPassword = "s3cr3t-Pa55"
)

var testCred = Credentials{User: testUser, Password: testPassword}

func newFakeSAP(t testing.TB) *fakeSAP {
	f := &fakeSAP{t: t, files: map[string]string{}, tables: map[string]*fakeTable{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSAP) client(t testing.TB, mod ...func(*Config)) *Client {
	cfg := Config{BaseURL: f.srv.URL, Client: "001", Language: "EN"}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fakeSAP) callsOf(fm string) []fakeCall {
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

func (f *fakeSAP) allCalls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

// parseRequest reads a request envelope back into the function name and its parameters.
func parseRequest(r *http.Request) (string, *Result, error) {
	d := xml.NewDecoder(r.Body)
	inBody := false
	for {
		tok, err := d.Token()
		if err != nil {
			return "", nil, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if se.Name.Local == "Body" {
			inBody = true
			continue
		}
		if inBody {
			res, err := decodeResponse(d, nil)
			return abapNameOf(se.Name.Local), res, err
		}
	}
}

func (f *fakeSAP) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/sap/bc/soap/rfc" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if u, p, ok := r.BasicAuth(); !ok || u != testUser || p != testPassword {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(f.read("logon_failed.html"))
		return
	}
	fm, in, err := parseRequest(r)
	if err != nil {
		http.Error(w, "bad envelope: "+err.Error(), 500)
		return
	}
	session := ""
	if ck, err := r.Cookie("SAP_SESSIONID_ECC_001"); err == nil {
		session = ck.Value
	} else {
		f.mu.Lock()
		f.sessions++
		session = fmt.Sprintf("sess-%d", f.sessions)
		f.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "SAP_SESSIONID_ECC_001", Value: session, Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "sap-usercontext", Value: "sap-client=001", Path: "/"})
	}
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{FM: fm, Session: session, In: in, Header: r.Header.Clone(), Query: r.URL.Query()})
	file, hasFile := f.files[fm]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	if hasFile {
		if strings.HasPrefix(file, "fault_") {
			w.WriteHeader(http.StatusInternalServerError)
		}
		w.Write(f.read(file))
		return
	}
	switch fm {
	case "RFC_READ_TABLE":
		f.readTable(w, in)
	case "DDIF_FIELDINFO_GET":
		f.fieldInfo(w, in)
	default:
		w.WriteHeader(500)
		w.Write(f.read("fault_fu_not_found.xml"))
	}
}

func (f *fakeSAP) read(name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

const (
	envOpen  = `<?xml version="1.0" encoding="utf-8"?><soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Header/><soap-env:Body>`
	envClose = `</soap-env:Body></soap-env:Envelope>`
)

func (f *fakeSAP) fault(w http.ResponseWriter, fm, exc string) {
	w.WriteHeader(500)
	fmt.Fprintf(w, `%s<soap-env:Fault><faultcode>soap-env:Client</faultcode><faultstring>%s</faultstring><detail><rfc:%s.Exception xmlns:rfc="urn:sap-com:document:sap:rfc:functions"><Name>%s</Name></rfc:%s.Exception></detail></soap-env:Fault>%s`, envOpen, exc, fm, exc, fm, envClose)
}

func (f *fakeSAP) readTable(w http.ResponseWriter, in *Result) {
	name := strings.TrimSpace(in.String("QUERY_TABLE"))
	tab := f.tables[name]
	if tab == nil {
		f.fault(w, "RFC_READ_TABLE", "TABLE_NOT_AVAILABLE")
		return
	}
	var cols []fakeCol
	if req := in.Table("FIELDS"); len(req) > 0 {
		for _, r := range req {
			found := false
			for _, c := range tab.Cols {
				if c.Name == r["FIELDNAME"] {
					cols, found = append(cols, c), true
				}
			}
			if !found {
				f.fault(w, "RFC_READ_TABLE", "FIELD_NOT_VALID")
				return
			}
		}
	} else {
		cols = tab.Cols
	}
	width := 0
	for _, c := range cols {
		width += c.Len
	}
	if width > MaxRowWidth {
		f.fault(w, "RFC_READ_TABLE", "DATA_BUFFER_EXCEEDED")
		return
	}
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	bw.WriteString(envOpen + `<urn:RFC_READ_TABLE.Response xmlns:urn="urn:sap-com:document:sap:rfc:functions"><DATA>`)
	if in.String("NO_DATA") != "X" {
		skip, _ := strconv.Atoi(in.String("ROWSKIPS"))
		count, _ := strconv.Atoi(in.String("ROWCOUNT"))
		end := tab.Rows
		if count > 0 {
			end = min(end, skip+count)
		}
		var line strings.Builder
		for i := skip; i < end; i++ {
			line.Reset()
			for _, c := range cols {
				v := tab.Value(i, c.Name)
				line.WriteString(v + strings.Repeat(" ", c.Len-len([]rune(v))))
			}
			bw.WriteString("<item><WA>")
			xml.EscapeText(bw, []byte(strings.TrimRight(line.String(), " ")))
			bw.WriteString("</WA></item>")
		}
	}
	bw.WriteString("</DATA><FIELDS>")
	off := 0
	for _, c := range cols {
		fmt.Fprintf(bw, "<item><FIELDNAME>%s</FIELDNAME><OFFSET>%06d</OFFSET><LENGTH>%06d</LENGTH><TYPE>C</TYPE><FIELDTEXT>%s text</FIELDTEXT></item>", c.Name, off, c.Len, c.Name)
		off += c.Len
	}
	bw.WriteString("</FIELDS><OPTIONS>")
	for _, o := range in.Table("OPTIONS") {
		bw.WriteString("<item><TEXT>")
		xml.EscapeText(bw, []byte(o["TEXT"]))
		bw.WriteString("</TEXT></item>")
	}
	bw.WriteString("</OPTIONS></urn:RFC_READ_TABLE.Response>" + envClose)
}

func (f *fakeSAP) fieldInfo(w http.ResponseWriter, in *Result) {
	name := strings.TrimSpace(in.String("TABNAME"))
	tab := f.tables[name]
	if tab == nil {
		f.fault(w, "DDIF_FIELDINFO_GET", "NOT_FOUND")
		return
	}
	fmt.Fprint(w, envOpen+`<urn:DDIF_FIELDINFO_GET.Response xmlns:urn="urn:sap-com:document:sap:rfc:functions"><DDOBJTYPE>TRANSP</DDOBJTYPE><DFIES_TAB>`)
	for i, c := range tab.Cols {
		key := ""
		if c.Key {
			key = "X"
		}
		fmt.Fprintf(w, "<item><TABNAME>%s</TABNAME><FIELDNAME>%s</FIELDNAME><POSITION>%04d</POSITION><LENG>%06d</LENG><OUTPUTLEN>%06d</OUTPUTLEN><DECIMALS>000000</DECIMALS><DATATYPE>CHAR</DATATYPE><INTTYPE>C</INTTYPE><CONVEXIT>%s</CONVEXIT><KEYFLAG>%s</KEYFLAG><FIELDTEXT>%s text</FIELDTEXT></item>", name, c.Name, i+1, c.Len, c.Len, c.Conv, key, c.Name)
	}
	fmt.Fprint(w, `</DFIES_TAB></urn:DDIF_FIELDINFO_GET.Response>`+envClose)
}
