// Package prompt builds the system prompt of a conversation (seed 000 "System prompt"): base
// instructions, the workspace's connections and SAP index fingerprint, ETL guidance, the
// transform types and the BAPI verification rules. Prompts are cached for five minutes per
// workspace, because they are needed on every model step and change rarely.
package prompt

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sapagent/sapagent/internal/etl"
)

// Connection is what the prompt says about one connection.
type Connection struct {
	ID         string
	Name       string
	SystemType string
	Simulated  bool // the connection is marked simulated (store.Connection.Simulated): the built-in simulated landscape answers
}

// Fingerprint summarises a workspace's SAP index (built by the sync workflows).
type Fingerprint struct {
	Connection    string
	Tables        int64
	Functions     int64
	BAPIs         int64
	CustomObjects int64
	CleanCore     map[string]int64 // custom objects per Clean Core level A–D
	IndexedAt     time.Time
}

// Input is everything the prompt depends on.
type Input struct {
	Connections []Connection
	Index       []Fingerprint
}

const base = `You are sapagent, an assistant for SAP landscapes (SAP ECC and SAP S/4HANA). You help people understand, analyse and change their SAP systems.

How you work:
- Answer precisely and say when you are unsure. Never invent table names, fields, function modules or data; look them up.
- Use the tools. SAP helpers (sap_get_table_schema, sap_read_table, sap_execute_rfc, ...) are functions inside execute_code scripts: combine several lookups in one script, print what matters, and keep results small (select fields, filter with WHERE, limit rows).
- RFC_READ_TABLE limits: the selected fields must fit in 512 characters, so name the fields you need; WHERE conditions use ABAP syntax (FIELD = 'VALUE', AND, OR, LIKE 'A%', IN ('A','B'), BETWEEN).
- Key fields keep their SAP internal format: customer and vendor numbers have leading zeros (KUNNR 0000100001), dates are YYYYMMDD.
- Changes to SAP data need the user's approval; the platform asks them. Explain what a change will do before proposing it, and report BAPI RETURN messages faithfully.
- Never ask for or repeat passwords; SAP credentials are stored per user and used by the platform.`

const bapiRules = `BAPI verification rules:
- Verify a BAPI on the system where it will run (the target), not on the source: call sap_get_function_interface on that connection first; releases differ between ECC and S/4HANA.
- Run writes with test_run=true first when the BAPI supports it, and read its RETURN table: any message of type E or A means nothing may be saved.
- A BAPI write is saved only by BAPI_TRANSACTION_COMMIT in the same session (commit=true does this after a successful call). Without it nothing changes.
- After a write, read the data back to confirm it.`

const etlGuidance = `Moving data between connections (ETL) always follows these steps, in order:
1. generate_field_mapping compares source and target tables (fields, lengths, keys) and proposes a mapping; suggest_transforms proposes transforms for fields that differ.
2. validate_migration checks the mapping against both systems' schemas and a sample of source rows.
3. preview_data_transform shows rows before and after the transform; extract_transform_load with dry_run=true validates every row on the target without saving.
4. extract_transform_load with dry_run=false writes (the user approves it). It refuses to run unless a successful dry run of exactly the same mapping happened before.
5. reconcile_migration compares counts, keys and sampled field values between source and target, and you report the differences.`

// Build renders the system prompt.
func Build(in Input) string {
	var b strings.Builder
	b.WriteString(base)
	b.WriteString("\n\n")
	switch len(in.Connections) {
	case 0:
		b.WriteString("This workspace has no SAP connection yet. SAP tools are not available; a workspace admin can add a connection.\n")
	default:
		b.WriteString("SAP connections of this workspace (pass connection_id")
		if len(in.Connections) == 1 {
			b.WriteString(", optional with a single connection")
		}
		b.WriteString("):\n")
		for _, c := range in.Connections {
			fmt.Fprintf(&b, "- %s: %q, %s", c.ID, c.Name, c.SystemType)
			if c.Simulated {
				b.WriteString(" (simulated system)")
			}
			b.WriteString("\n")
		}
	}
	if len(in.Connections) > 0 {
		b.WriteString("\nSAP index: ")
		if len(in.Index) == 0 {
			b.WriteString("not built yet; search the repository live with sap_search_index.\n")
		} else {
			b.WriteString("\n")
			idx := append([]Fingerprint(nil), in.Index...)
			sort.Slice(idx, func(i, j int) bool { return idx[i].Connection < idx[j].Connection })
			for _, f := range idx {
				fmt.Fprintf(&b, "- %s: %d tables, %d function modules (%d BAPIs), %d custom objects", f.Connection, f.Tables, f.Functions, f.BAPIs, f.CustomObjects)
				if len(f.CleanCore) > 0 {
					fmt.Fprintf(&b, "; Clean Core levels of custom objects: A %d, B %d, C %d, D %d", f.CleanCore["A"], f.CleanCore["B"], f.CleanCore["C"], f.CleanCore["D"])
				}
				fmt.Fprintf(&b, " (indexed %s)\n", f.IndexedAt.UTC().Format("2006-01-02 15:04 UTC"))
			}
			b.WriteString("Search the index with sap_search_index (names, wildcards like BAPI_SALES*, descriptions or questions); read live data with the other SAP tools.\n")
		}
		b.WriteString("\n")
		b.WriteString(bapiRules)
		b.WriteString("\n")
	}
	if len(in.Connections) >= 2 {
		b.WriteString("\n")
		b.WriteString(etlGuidance)
		b.WriteString("\n\nTransform types for field mappings:\n")
		for _, t := range etl.Types {
			fmt.Fprintf(&b, "- %s: %s\n", t.Name, t.Description)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Cache keeps built prompts for TTL, keyed by workspace and what the prompt depends on.
type Cache struct {
	TTL time.Duration
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]cached
}

type cached struct {
	text    string
	expires time.Time
}

// Invalidate drops the cached prompts of a workspace (its index changed).
func (c *Cache) Invalidate(workspaceID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if strings.HasPrefix(k, workspaceID) {
			delete(c.entries, k)
		}
	}
}

// Get returns the cached prompt for key or builds it from what input returns (called only on
// a miss, so it may run queries such as the index fingerprint).
func (c *Cache) Get(key string, input func() Input) string {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	ttl := c.TTL
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok && now().Before(e.expires) {
		return e.text
	}
	if c.entries == nil {
		c.entries = map[string]cached{}
	}
	for k, e := range c.entries { // drop expired entries as we go; the map stays small
		if !now().Before(e.expires) {
			delete(c.entries, k)
		}
	}
	text := Build(input())
	c.entries[key] = cached{text: text, expires: now().Add(ttl)}
	return text
}
