// Package sapindex is the SAP landscape index in Postgres (schemas/migrations/012_sap_index.sql,
// docs/sap-index.md): the phases a sync pages through, how their items become index rows and
// search entries, generations and their switch, and hybrid search over the entries.
package sapindex

import (
	"time"

	"github.com/sapagent/sapagent/internal/sap"
)

// Index phases, in the order a sync runs them. The names are the connector endpoints without
// their "index/" prefix.
const (
	PhaseCustomObjects  = "custom_objects"
	PhaseRelationships  = "relationships"
	PhaseCustomCode     = "custom_code"
	PhaseCatalogContext = "catalog_context"
	PhaseEnhancements   = "enhancements"
	PhaseS4Extensions   = "s4_extensions"
)

// Phases lists the index phases of a system type (S/4HANA extensions only on S/4HANA).
func Phases(systemType string) []string {
	p := []string{PhaseCustomObjects, PhaseRelationships, PhaseCustomCode, PhaseCatalogContext, PhaseEnhancements}
	if systemType == "S4HANA" {
		p = append(p, PhaseS4Extensions)
	}
	return p
}

// Endpoint is the connector endpoint of a phase.
func Endpoint(phase string) string { return "index/" + phase }

var _ = sap.EndpointIndexCustomObjects // the endpoints Endpoint names

// Sync modes and triggers.
const (
	ModeFull       = "full"
	ModeDelta      = "delta"
	ModeEnrichOnly = "enrich-only"

	TriggerManual   = "manual"
	TriggerSchedule = "schedule"
)

// ValidMode reports whether m is a sync mode.
func ValidMode(m string) bool { return m == ModeFull || m == ModeDelta || m == ModeEnrichOnly }

// Counts is a connection's index fingerprint (workspace_sap_graph.counts), what the system
// prompt and the dashboard show.
type Counts struct {
	Entries       int64            `json:"entries"`        // search entries
	Tables        int64            `json:"tables"`         // standard and custom tables
	Functions     int64            `json:"functions"`      // function modules
	BAPIs         int64            `json:"bapis"`          // function modules named BAPI_*
	CustomObjects int64            `json:"custom_objects"` // objects of the custom_objects phase
	CustomCode    int64            `json:"custom_code"`    // custom objects with source
	CodeLines     int64            `json:"code_lines"`     // lines of custom source
	Relationships int64            `json:"relationships"`
	Enhancements  int64            `json:"enhancements"`
	Extensions    int64            `json:"extensions"` // S/4HANA extensions
	Docs          int64            `json:"docs"`       // generated docs
	CleanCore     map[string]int64 `json:"clean_core"` // custom objects per level A–D
}

// Progress is what a running sync reports (workspace_sap_graph.progress, sync_progress
// events, the workflow's progress query).
type Progress struct {
	RunID string    `json:"run_id"`
	Mode  string    `json:"mode"`
	Phase string    `json:"phase"`
	Done  int64     `json:"done"`  // items of the phase written
	Total int64     `json:"total"` // items the connector announced (0: unknown)
	At    time.Time `json:"at"`
}
