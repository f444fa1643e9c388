package soaprfc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
)

// recordedRequest splits a recorded .request file into its request line, headers and body.
func recordedRequest(t *testing.T, name string) *http.Request {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	// The recordings carry no Content-Length: the body is everything after the blank line.
	head, body, ok := bytes.Cut(b, []byte("\n\n"))
	if !ok {
		t.Fatalf("%s: no blank line after the headers", name)
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(append(head, "\r\n\r\n"...))))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	req.Body = io.NopCloser(bytes.NewReader(bytes.TrimSpace(body)))
	return req
}

// shape lists every element path of an XML document as namespace-qualified names
// (undeclared prefixes stay as written), text ignored.
func shape(t *testing.T, doc []byte, localOnly bool) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = false
	var path []string
	set := map[string]bool{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			n := x.Name.Local
			if !localOnly && x.Name.Space != "" {
				n = "{" + x.Name.Space + "}" + n
			}
			path = append(path, n)
			set[strings.Join(path, "/")] = true
		case xml.EndElement:
			path = path[:len(path)-1]
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Our RFC_READ_TABLE envelope has the same elements, namespaces and headers as the request a
// real client (metasploit's SAP SOAP RFC scanner) sends.
func TestEnvelopeMatchesRecordedRFCReadTable(t *testing.T) {
	f := newFakeSAP(t)
	f.files["RFC_READ_TABLE"] = "rfc_read_table_t000.response.xml"
	c := f.client(t)
	_, err := c.Call(context.Background(), testCred, "RFC_READ_TABLE", Params{
		Imports: map[string]any{"DELIMITER": "|", "QUERY_TABLE": "T000", "NO_DATA": ""},
		Tables: map[string][]Struct{"DATA": nil, "OPTIONS": nil,
			"FIELDS": {{"FIELDNAME": "MANDT"}, {"FIELDNAME": "MTEXT"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := recordedRequest(t, "rfc_read_table_t000_msf.request")
	recBody, _ := io.ReadAll(rec.Body)
	ours, _ := Envelope("RFC_READ_TABLE", Params{
		Imports: map[string]any{"DELIMITER": "|", "QUERY_TABLE": "T000", "NO_DATA": ""},
		Tables: map[string][]Struct{"DATA": nil, "OPTIONS": nil,
			"FIELDS": {{"FIELDNAME": "MANDT"}, {"FIELDNAME": "MTEXT"}}},
	})
	if got, want := shape(t, ours, false), shape(t, recBody, false); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("element paths differ\nours:\n%s\nrecorded:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The Perl SAP::SOAP request (undeclared SOAP-ENV prefix): same local names for the
	// parameters it sends.
	trdir := recordedRequest(t, "rfc_read_table_trdir.request")
	trBody, _ := io.ReadAll(trdir.Body)
	ours2, _ := Envelope("RFC_READ_TABLE", readParams("TRDIR", nil, []string{"NAME LIKE 'RS%'"}, 0, 5, false))
	ourSet := map[string]bool{}
	for _, p := range shape(t, ours2, true) {
		ourSet[p] = true
	}
	for _, p := range shape(t, trBody, true) {
		if p == "Envelope/Body/RFC_READ_TABLE/DELIMITER" { // we send DELIMITER too, empty
			continue
		}
		if !ourSet[p] {
			t.Errorf("recorded element %s missing from our envelope", p)
		}
	}

	got := f.callsOf("RFC_READ_TABLE")[0]
	mt, params, _ := mime.ParseMediaType(got.Header.Get("Content-Type"))
	rmt, _, _ := mime.ParseMediaType(rec.Header.Get("Content-Type"))
	if mt != rmt || !strings.EqualFold(params["charset"], "utf-8") {
		t.Errorf("Content-Type %q, recorded %q", got.Header.Get("Content-Type"), rec.Header.Get("Content-Type"))
	}
	if got.Header.Get("SOAPAction") != rec.Header.Get("SOAPAction") {
		t.Errorf("SOAPAction %q, recorded %q", got.Header.Get("SOAPAction"), rec.Header.Get("SOAPAction"))
	}
	for _, q := range []string{"sap-client", "sap-language"} {
		if got.Query.Get(q) != rec.URL.Query().Get(q) {
			t.Errorf("%s = %q, recorded %q", q, got.Query.Get(q), rec.URL.Query().Get(q))
		}
	}
}

func TestEnvelopeEscapesAndRejectsBadInput(t *testing.T) {
	env, err := Envelope("/SAPDS/RFC_READ_TABLE2", Params{
		Imports:  map[string]any{"TEXT": `a<b & "c" 'd'`, "S": Struct{"F": "x>y"}},
		Changing: map[string]any{"C": "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := string(env)
	for _, want := range []string{"<urn:_-SAPDS_-RFC_READ_TABLE2 ", "a&lt;b &amp; &#34;c&#34; &#39;d&#39;", "<S><F>x&gt;y</F></S>", "<C>1</C>"} {
		if !strings.Contains(s, want) {
			t.Errorf("envelope lacks %q:\n%s", want, s)
		}
	}
	var round struct{}
	if err := xml.Unmarshal(env, &round); err != nil {
		t.Fatalf("envelope is not XML: %v", err)
	}
	for name, p := range map[string]Params{
		"bad utf8":   {Imports: map[string]any{"X": "a\xffb"}},
		"bad name":   {Imports: map[string]any{"X><Y": "1"}},
		"bad type":   {Imports: map[string]any{"X": 3}},
		"bad field":  {Tables: map[string][]Struct{"T": {{"A B": "1"}}}},
		"bad struct": {Imports: map[string]any{"S": Struct{"<": "1"}}},
	} {
		_, err := Envelope("FM", p)
		var e *Error
		if !errors.As(err, &e) || e.Code != sap.ErrBadRequest {
			t.Errorf("%s: got %v, want BAD_REQUEST", name, err)
		}
	}
	if _, err := Envelope("RFC READ", Params{}); err == nil {
		t.Error("a function name with a blank was accepted")
	}
}

func TestCallParsesExportsStructuresAndTables(t *testing.T) {
	f := newFakeSAP(t)
	f.files["BAPI_PO_CHANGE"] = "bapi_po_change_success.response.xml"
	c := f.client(t)
	res, err := c.Call(context.Background(), testCred, "BAPI_PO_CHANGE", Params{
		Imports: map[string]any{"PURCHASEORDER": "4500017120"},
		Tables:  map[string][]Struct{"POITEM": {{"PO_ITEM": "00010", "QUANTITY": "5"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.Struct("EXPHEADER"); h["PO_NUMBER"] != "4500017120" || h["VENDOR"] != "0000100001" {
		t.Errorf("EXPHEADER = %v", h)
	}
	if r := res.Table("RETURN"); len(r) != 1 || r[0]["TYPE"] != "S" || r[0]["MESSAGE"] != "Standard PO 4500017120 changed" {
		t.Errorf("RETURN = %v", r)
	}
	if res.Table("POITEM") != nil || res.String("POITEM") != "" {
		t.Errorf("empty POITEM = %v", res.Exports["POITEM"])
	}
	in := f.callsOf("BAPI_PO_CHANGE")[0].In
	if in.String("PURCHASEORDER") != "4500017120" || in.Table("POITEM")[0]["QUANTITY"] != "5" {
		t.Errorf("server saw %+v", in)
	}
}

func TestFieldInfoFromRecordedShape(t *testing.T) {
	f := newFakeSAP(t)
	f.files["DDIF_FIELDINFO_GET"] = "ddif_fieldinfo_get_kna1.response.xml"
	c := f.client(t)
	fs, err := c.FieldInfo(context.Background(), testCred, "kna1", "")
	if err != nil {
		t.Fatal(err)
	}
	in := f.callsOf("DDIF_FIELDINFO_GET")[0].In
	if in.String("TABNAME") != "KNA1" || in.String("LANGU") != "E" {
		t.Errorf("imports %v", in.Exports)
	}
	if len(fs) != 6 {
		t.Fatalf("%d fields (the .INCLUDE marker must be dropped): %+v", len(fs), fs)
	}
	k := fs[1]
	if k.Name != "KUNNR" || !k.Key || k.ConvExit != "ALPHA" || k.Length != 10 || k.Text != "Customer Number" || k.Type != "CHAR" {
		t.Errorf("KUNNR = %+v", k)
	}
	u := fs[5]
	if u.Name != "UMSAT" || u.Key || u.Type != "CURR" || u.Decimals != 2 || u.Length != 15 {
		t.Errorf("UMSAT = %+v", u)
	}
	if fs[0].CheckTable != "T000" || fs[2].CheckTable != "T005" {
		t.Errorf("check tables %q %q", fs[0].CheckTable, fs[2].CheckTable)
	}
	sf := SchemaFields(fs)
	if sf[1].Name != "KUNNR" || !sf[1].Key || sf[1].Domain != "KUNNR" || sf[1].Description != "Customer Number" {
		t.Errorf("schema field %+v", sf[1])
	}
}

// Every SAP failure becomes the connector protocol's code; the password appears in none.
func TestErrorMapping(t *testing.T) {
	type tc struct {
		name      string
		handler   http.HandlerFunc
		code      string
		exception string
		is        error
		mod       func(*Config)
	}
	file := func(status int, ct, name string) http.HandlerFunc {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(status)
			w.Write(b)
		}
	}
	xmlCT := "text/xml; charset=utf-8"
	cases := []tc{
		{name: "logon failed 401", handler: file(401, "text/html", "logon_failed.html"), code: sap.ErrLogonFailed},
		{name: "logon page with 200", handler: file(200, "text/html", "logon_failed.html"), code: sap.ErrLogonFailed},
		{name: "forbidden 403", handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) }, code: sap.ErrAuthorization},
		{name: "NOT_AUTHORIZED", handler: file(500, xmlCT, "fault_not_authorized.xml"), code: sap.ErrAuthorization, exception: "NOT_AUTHORIZED"},
		{name: "RFC_NO_AUTHORITY", handler: func(w http.ResponseWriter, r *http.Request) {
			f := &fakeSAP{t: t}
			w.Header().Set("Content-Type", xmlCT)
			f.fault(w, "RFC_READ_TABLE", "RFC_NO_AUTHORITY")
		}, code: sap.ErrAuthorization, exception: "RFC_NO_AUTHORITY"},
		{name: "TABLE_NOT_AVAILABLE", handler: file(500, xmlCT, "fault_table_not_available.xml"), code: sap.ErrNotFound, exception: "TABLE_NOT_AVAILABLE"},
		{name: "FU_NOT_FOUND", handler: file(500, xmlCT, "fault_fu_not_found.xml"), code: sap.ErrNotFound, exception: "FU_NOT_FOUND"},
		{name: "DATA_BUFFER_EXCEEDED", handler: file(500, xmlCT, "fault_data_buffer_exceeded.xml"), code: sap.ErrDataBufferExceeded, exception: "DATA_BUFFER_EXCEEDED"},
		{name: "OPTION_NOT_VALID", handler: file(500, xmlCT, "fault_option_not_valid.xml"), code: sap.ErrInvalidWhereOptions, exception: "OPTION_NOT_VALID"},
		{name: "custom exception passed through", handler: file(500, xmlCT, "fault_custom_exception.xml"), code: sap.ErrSAPException, exception: "EMPLOYEE_LOCKED"},
		{name: "service not active 404", handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) }, code: sap.ErrNotSupported},
		{name: "503", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(503)
			io.WriteString(w, "<html>Service unavailable</html>")
		}, code: sap.ErrSystemUnavailable},
		{name: "HTML instead of XML", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<!DOCTYPE html><html><body>SAP NetWeaver Portal</body></html>")
		}, code: sap.ErrSystemUnavailable, is: ErrNotXML},
		{name: "HTML labelled as XML", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", xmlCT)
			io.WriteString(w, "<html><body><p>maintenance<br></body></html>")
		}, code: sap.ErrSystemUnavailable, is: ErrNotXML},
		{name: "truncated answer", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", xmlCT)
			io.WriteString(w, envOpen+"<urn:X.Response xmlns:urn=\"urn:sap-com:document:sap:rfc:functions\"><DATA><item><WA>1")
		}, code: sap.ErrSystemUnavailable, is: ErrNotXML},
		{name: "empty 200", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", xmlCT)
		}, code: sap.ErrSystemUnavailable, is: ErrNotXML},
		{name: "invalid UTF-8", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", xmlCT)
			io.WriteString(w, envOpen+"<urn:X.Response xmlns:urn=\"urn:sap-com:document:sap:rfc:functions\"><A>caf\xe9</A></urn:X.Response>"+envClose)
		}, code: sap.ErrSystemUnavailable, is: ErrInvalidUTF8},
		{name: "oversized", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", xmlCT)
			io.WriteString(w, envOpen+"<urn:X.Response xmlns:urn=\"urn:sap-com:document:sap:rfc:functions\"><A>"+strings.Repeat("x", 4096)+"</A></urn:X.Response>"+envClose)
		}, code: sap.ErrSystemUnavailable, is: ErrResponseTooLarge, mod: func(c *Config) { c.MaxResponseBytes = 1024 }},
		{name: "timeout", handler: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(500 * time.Millisecond):
			}
		}, code: sap.ErrTimeout, mod: func(c *Config) { c.Timeout = 50 * time.Millisecond }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			cfg := Config{BaseURL: srv.URL, Client: "001"}
			if c.mod != nil {
				c.mod(&cfg)
			}
			cl, _ := New(cfg)
			_, err := cl.Call(context.Background(), testCred, "RFC_READ_TABLE", Params{Imports: map[string]any{"QUERY_TABLE": "T000"}})
			checkErr(t, err, c.code, c.exception, c.is)
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		cl, _ := New(Config{BaseURL: url})
		_, err := cl.Call(context.Background(), testCred, "RFC_PING", Params{})
		checkErr(t, err, sap.ErrSystemUnavailable, "", nil)
	})
}

func checkErr(t *testing.T, err error, code, exc string, is error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want *Error %s", err, err, code)
	}
	if e.Code != code || e.Exception != exc {
		t.Errorf("got code %s exception %q (%v), want %s %q", e.Code, e.Exception, err, code, exc)
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("error %v is not %v", err, is)
	}
	if strings.Contains(err.Error(), testPassword) || strings.Contains(e.Message, testPassword) {
		t.Errorf("password in error: %v", err)
	}
	if e.Status < 400 {
		t.Errorf("status %d", e.Status)
	}
}

// Changing parameters go out like imports and come back among the exports.
func TestCallChangingParameter(t *testing.T) {
	var sent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sent = string(b)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		io.WriteString(w, envOpen+`<urn:Z_COUNTER_STEP.Response xmlns:urn="urn:sap-com:document:sap:rfc:functions"><COUNTER>000002</COUNTER><STATE><STEP>1</STEP><NOTE>a &lt; b</NOTE></STATE></urn:Z_COUNTER_STEP.Response>`+envClose)
	}))
	defer srv.Close()
	c, _ := New(Config{BaseURL: srv.URL})
	res, err := c.Call(context.Background(), testCred, "Z_COUNTER_STEP", Params{
		Imports:  map[string]any{"STEP": "1"},
		Changing: map[string]any{"COUNTER": "000001"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sent, "<COUNTER>000001</COUNTER>") || !strings.Contains(sent, "<STEP>1</STEP>") {
		t.Errorf("request %s", sent)
	}
	if res.String("COUNTER") != "000002" || res.Struct("STATE")["NOTE"] != "a < b" {
		t.Errorf("exports %v", res.Exports)
	}
}
