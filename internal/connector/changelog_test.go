package connector

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
)

func TestChangeLogSurvivesRestartAndCutLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes-ECC.jsonl")
	l, err := OpenChangeLog(path)
	if err != nil {
		t.Fatal(err)
	}
	// A new log stands at 1, so a delta can start after a full sync made before any change.
	if l.Latest() != 1 {
		t.Fatalf("new log at %d", l.Latest())
	}
	stored, err := l.Append([]sap.Change{{ObjectType: "PROG", ObjectName: "ZA"}, {ObjectType: "CLAS", ObjectName: "ZCL_B"}}, json.RawMessage(`{"seen":{"a":"20261128"}}`))
	if err != nil || stored[0].Seq != 2 || stored[1].Seq != 3 {
		t.Fatalf("append: %v %+v", err, stored)
	}
	if _, err := l.Append([]sap.Change{{ObjectType: "PROG", ObjectName: "ZC", ChangeType: "deleted"}}, nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	// A crash in the middle of a write leaves a cut last line: it was never answered.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	_, _ = f.WriteString(`{"changes":[{"seq":5,"object_type":"PR`)
	f.Close()
	l, err = OpenChangeLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Latest() != 4 || string(l.State()) != `{"seen":{"a":"20261128"}}` {
		t.Fatalf("after restart: latest %d, state %s", l.Latest(), l.State())
	}
	got, more := l.After(2, 1)
	if len(got) != 1 || got[0].ObjectName != "ZCL_B" || !more {
		t.Fatalf("after 2: %+v %v", got, more)
	}
	next, _ := l.Append([]sap.Change{{ObjectType: "DATA", ObjectName: "KNA1"}}, nil)
	if next[0].Seq != 5 {
		t.Fatalf("seq after restart: %d", next[0].Seq)
	}
}

func TestChangeLogDefaultsNextToIdempotencyStore(t *testing.T) {
	cfg, err := ParseConfig([]byte("connector_keys: [k-0123456789]\nidempotency_store: /var/lib/sapagent/idem.jsonl\nsystems:\n  - id: ECC\n    url: https://sap.example.com\n    client: \"100\"\n    customer_namespaces: [/acme/]\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Systems[0]; s.ChangeLog != "/var/lib/sapagent/changes-ECC.jsonl" || s.CustomerNamespaces[0] != "/ACME/" {
		t.Fatalf("system: %+v", s)
	}
	if _, err := ParseConfig([]byte("connector_keys: [k-0123456789]\nsystems:\n  - id: ECC\n    url: https://sap.example.com\n    client: \"100\"\n    customer_namespaces: [ACME]\n"), func(string) string { return "" }); err == nil {
		t.Fatal("a namespace without slashes was accepted")
	}
}
