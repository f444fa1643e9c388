package adt

import (
	"os"
	"path/filepath"
	"testing"
)

// parseAll runs every parser on one body; none may panic, whatever SAP (or a proxy) sends.
func parseAll(body []byte) {
	ParseDiscovery(body)
	ParseSearch(body)
	ParseUsageScope(body)
	ParseUsageResult(body)
	ParsePreview(body)
	ParseException(body)
}

func recordedBodies(t testing.TB) map[string][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", "adt", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	out["html"] = []byte("<!DOCTYPE html><html><head><title>Logon</title></head><body><form></form></body></html>")
	return out
}

// TestParsersSurviveTruncatedAndGarbledAnswers cuts every recorded answer at many points and
// flips bytes in it: every parser returns (an error or a value) and never panics.
func TestParsersSurviveTruncatedAndGarbledAnswers(t *testing.T) {
	for _, body := range recordedBodies(t) {
		cuts := 200
		if len(body) > 64<<10 {
			cuts = 10 // the modern discovery document is 400 KB
		}
		step := max(1, len(body)/cuts)
		for cut := 0; cut < len(body); cut += step {
			parseAll(body[:cut])
			garbled := append([]byte(nil), body...)
			garbled[cut] ^= 0x5a
			parseAll(garbled)
		}
	}
	// A structurally odd preview: column lengths differ.
	odd := []byte(`<dataPreview:tableData xmlns:dataPreview="http://www.sap.com/adt/dataPreview">` +
		`<dataPreview:columns><dataPreview:metadata dataPreview:name="A"/><dataPreview:dataSet><dataPreview:data>1</dataPreview:data></dataPreview:dataSet></dataPreview:columns>` +
		`<dataPreview:columns><dataPreview:metadata dataPreview:name="B"/><dataPreview:dataSet/></dataPreview:columns></dataPreview:tableData>`)
	if _, err := ParsePreview(odd); err == nil {
		t.Error("ragged columns should be refused, not padded")
	}
	for _, body := range [][]byte{nil, []byte("<html><body>x</body></html>"), []byte(`<?xml version="1.0"?><x/>`)} {
		if _, err := ParseDiscovery(body); err == nil {
			t.Errorf("discovery %q accepted", body)
		}
		if _, err := ParsePreview(body); err == nil {
			t.Errorf("preview %q accepted", body)
		}
	}
}

func FuzzParsers(f *testing.F) {
	for _, b := range recordedBodies(f) {
		if len(b) < 8<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) { parseAll(body) })
}
