package api

import "sort"

// JSON schemas of the landscape's read routes (api/index/landscape.go) for /api/openapi.json.

var (
	strType  = map[string]any{"type": "string"}
	integer  = map[string]any{"type": "integer"}
	number   = map[string]any{"type": "number"}
	boolean  = map[string]any{"type": "boolean"}
	nullTime = map[string]any{"type": []string{"string", "null"}, "format": "date-time"}
)

func enum(values ...string) map[string]any { return map[string]any{"enum": values} }

func arrayOf(items map[string]any) map[string]any {
	return map[string]any{"type": "array", "items": items}
}

// props makes an object schema whose every property is required (the API always sends them).
func props(p map[string]any) map[string]any {
	req := make([]string, 0, len(p))
	for k := range p {
		req = append(req, k)
	}
	sort.Strings(req)
	return obj(req, p)
}

// listOf is the list envelope with items of one schema and extra fields.
func listOf(item map[string]any, extra map[string]any) map[string]any {
	p := map[string]any{"data": arrayOf(item), "next_cursor": map[string]any{"type": []string{"string", "null"}}, "has_more": boolean}
	for k, v := range extra {
		p[k] = v
	}
	return props(p)
}

var pageQuery = []queryParam{{"cursor", strType, false}, {"limit", map[string]any{"type": "integer", "minimum": 1, "maximum": 500}, false}}

var objectQuery = append([]queryParam{{"type", str(10), false}, {"package", str(40), false}, {"custom", boolean, false},
	{"q", str(120), false}}, pageQuery...)

var (
	countsSchema = map[string]any{"type": "object", "description": "sapindex.Counts: the fingerprint the last sync stored",
		"properties": map[string]any{"entries": integer, "tables": integer, "functions": integer, "bapis": integer, "custom_objects": integer,
			"custom_code": integer, "code_lines": integer, "relationships": integer, "enhancements": integer, "extensions": integer, "docs": integer,
			"clean_core": map[string]any{"type": "object", "additionalProperties": integer}}}
	graphProps = map[string]any{"connection_id": uuidStr, "name": strType, "system_type": strType, "status": enum("none", "ready"),
		"sync_status": enum("none", "syncing", "ready", "failed"), "generation": integer, "change_seq": integer, "last_full_sync_at": nullTime, "last_delta_sync_at": nullTime,
		"counts": countsSchema}
	countSchema     = props(map[string]any{"name": strType, "objects": integer, "custom": integer})
	syncRunSchema   = props(map[string]any{"id": uuidStr, "mode": enum("full", "delta", "enrich-only"), "trigger": enum("manual", "schedule"), "status": strType, "generation": integer, "error": strType, "started_at": map[string]any{"type": "string", "format": "date-time"}, "finished_at": nullTime})
	dashboardSchema = props(map[string]any{"data": arrayOf(props(merge(graphProps, map[string]any{
		"objects": integer, "custom_objects": integer,
		"by_type":       arrayOf(props(map[string]any{"type": strType, "objects": integer, "custom": integer})),
		"by_package":    arrayOf(countSchema),
		"by_component":  arrayOf(countSchema),
		"custom_code":   props(map[string]any{"objects": integer, "lines": integer}),
		"clean_core":    props(map[string]any{"A": integer, "B": integer, "C": integer, "D": integer}),
		"relationships": integer, "last_runs": arrayOf(syncRunSchema)})))})
	objectSchema = props(map[string]any{"object_type": strType, "object_name": strType, "category": strType, "custom": boolean, "package": strType,
		"title": strType, "release_state": strType})
	sideSchema = map[string]any{"oneOf": []any{props(map[string]any{"package": strType, "title": strType, "release_state": strType}), map[string]any{"type": "null"}}}
	diffConn   = props(map[string]any{"connection_id": uuidStr, "name": strType, "system_type": strType, "generation": integer})
	diffSchema = listOf(obj([]string{"object_type", "object_name", "custom", "left", "right"}, map[string]any{"object_type": strType, "object_name": strType,
		"custom": boolean, "left": sideSchema, "right": sideSchema, "fields": arrayOf(enum("package", "title", "release_state", "body", "source"))}),
		map[string]any{"kind": enum("only_left", "only_right", "changed"), "counts": props(map[string]any{"only_left": integer, "only_right": integer, "changed": integer, "same": integer}),
			"left": diffConn, "right": diffConn})
	reasonSchema = map[string]any{"type": "object", "description": "cleancore.Reason",
		"properties": map[string]any{"usage": props(map[string]any{"type": strType, "name": strType, "kind": strType}), "state": strType,
			"level": enum("A", "B", "C", "D"), "why": strType, "deprecated": boolean, "successors": arrayOf(successorSchema), "successorConcept": strType}}
	successorSchema = map[string]any{"type": "object", "properties": map[string]any{"type": strType, "name": strType}}
	findingSchema   = props(map[string]any{"object_type": strType, "object_name": strType, "package": strType, "level": enum("A", "B", "C", "D"),
		"reasons": integer, "top_reasons": arrayOf(reasonSchema), "successors": arrayOf(successorSchema)})
	cleanCoreSummarySchema = props(map[string]any{"objects": integer, "levels": arrayOf(props(map[string]any{"level": enum("A", "B", "C", "D"), "objects": integer, "share": number}))})
	cleanCoreObjectSchema  = props(map[string]any{"object_type": strType, "object_name": strType, "package": strType, "level": enum("A", "B", "C", "D"),
		"reasons": arrayOf(reasonSchema), "conversion": arrayOf(map[string]any{"type": "object", "description": "cleancore.ConversionItem"}), "generation": integer})
	docSchema = obj([]string{"kind", "subject", "title", "model", "generation", "updated_at"}, map[string]any{"kind": enum("package", "object", "er_diagram", "business_process"),
		"subject": strType, "title": strType, "model": strType, "generation": integer, "updated_at": map[string]any{"type": "string", "format": "date-time"},
		"markdown": map[string]any{"type": "string", "description": "one doc only"}})
	sourceSchema = obj([]string{"connection_id", "object_type", "name", "source", "lines", "from"}, map[string]any{"connection_id": uuidStr, "object_type": strType,
		"name": strType, "source": strType, "lines": integer, "from": enum("index", "live"),
		"generation": map[string]any{"type": "integer", "description": "from: index only"}, "indexed_at": nullTime})
)

// Schemas of the sync routes (api/index/sync.go).
var (
	syncRunFullSchema = map[string]any{"type": "object", "description": "sapindex.SyncRun", "required": []string{"id", "connection_id", "mode", "trigger", "status", "phases", "counts", "started_at"},
		"properties": map[string]any{"id": uuidStr, "workspace_id": uuidStr, "connection_id": uuidStr, "workflow_id": strType, "workflow_run_id": strType,
			"mode": enum("full", "delta", "enrich-only"), "trigger": enum("manual", "schedule"), "status": enum("running", "succeeded", "failed", "cancelled", "skipped"),
			"requested_by": strType, "generation": integer, "phases": map[string]any{"type": []string{"array", "object", "null"}}, "counts": map[string]any{"type": []string{"object", "null"}},
			"error": strType, "started_at": map[string]any{"type": "string", "format": "date-time"}, "finished_at": nullTime, "duration_ms": map[string]any{"type": []string{"integer", "null"}}}}
	indexConnectionSchema = map[string]any{"type": "object", "required": []string{"connection_id", "name", "system_type", "status", "index", "last_run"},
		"properties": map[string]any{"connection_id": uuidStr, "name": strType, "system_type": strType, "status": enum("none", "syncing", "ready", "failed"),
			"index": map[string]any{"type": []string{"object", "null"}}, "last_run": map[string]any{"oneOf": []any{syncRunFullSchema, map[string]any{"type": "null"}}}}}
	scheduleSchema = map[string]any{"type": "object", "required": []string{"id", "connection_id", "mode", "cron", "time_zone", "paused", "next_runs", "recent_runs"},
		"properties": map[string]any{"id": strType, "connection_id": strType, "mode": enum("full", "delta"), "cron": strType, "time_zone": strType, "paused": boolean,
			"note": strType, "next_runs": arrayOf(map[string]any{"type": "string", "format": "date-time"}), "recent_runs": arrayOf(map[string]any{"type": "string", "format": "date-time"}),
			"missing": boolean}}
)

func merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
