package tools

import (
	"context"
	"strings"
)

// Cross-connection tools (seed 000 "Cross-system tools"): offered only when the workspace has
// two or more connections; they take a source and a target connection.
const (
	GenerateFieldMapping = "generate_field_mapping"
	PreviewDataTransform = "preview_data_transform"
	SuggestTransforms    = "suggest_transforms"
	ValidateMigration    = "validate_migration"
	ExtractTransformLoad = "extract_transform_load"
	ReconcileMigration   = "reconcile_migration"
)

// CrossExecutor runs the cross-connection tools: one method per tool (see SAPExecutor).
type CrossExecutor interface {
	GenerateFieldMapping(ctx context.Context, args map[string]any) (any, error)
	SuggestTransforms(ctx context.Context, args map[string]any) (any, error)
	ValidateMigration(ctx context.Context, args map[string]any) (any, error)
	PreviewDataTransform(ctx context.Context, args map[string]any) (any, error)
	ExtractTransformLoad(ctx context.Context, args map[string]any) (any, error)
	ReconcileMigration(ctx context.Context, args map[string]any) (any, error)
}

const crossConns = `"source_connection_id":{"type":"string","minLength":1},"target_connection_id":{"type":"string","minLength":1}`

// mappingSchema is a table mapping (internal/etl.Mapping).
const mappingSchema = `"mapping":{"type":"object","required":["source_table","target_table","fields"],"properties":{
	"source_table":{"type":"string","minLength":1,"maxLength":30},
	"target_table":{"type":"string","minLength":1,"maxLength":30},
	"fields":{"type":"array","minItems":1,"maxItems":300,"items":{"type":"object","required":["target","transform"],"properties":{
		"target":{"type":"string","minLength":1},"source":{"type":"string"},
		"transform":{"type":"string","enum":["direct","constant","uppercase","lowercase","trim","alpha_in","alpha_out","substring","concat","value_map","date_format","default_if_empty"]},
		"value":{"type":"string"},"length":{"type":"integer","minimum":0},"start":{"type":"integer","minimum":0},
		"fields":{"type":"array","items":{"type":"string"}},"separator":{"type":"string"},
		"map":{"type":"object","additionalProperties":{"type":"string"}},"default":{"type":"string"},
		"from":{"type":"string"},"to":{"type":"string"}}}}}}`

func crossParams(required []string, props ...string) string {
	req := append([]string{`"source_connection_id"`, `"target_connection_id"`}, required...)
	return `{"type":"object","additionalProperties":false,"required":[` + strings.Join(req, ",") + `],"properties":{` +
		strings.Join(append([]string{crossConns}, props...), ",") + `}}`
}

const whereParam = `"where":{"type":"string","maxLength":4000,"description":"ABAP WHERE condition on the source table"}`

// Cross returns the cross-connection tool definitions.
func Cross() []Definition {
	return []Definition{
		{
			Name:              GenerateFieldMapping,
			Description:       "Compare a source table with a target table (fields, types, lengths, keys, customer appends) and propose a field mapping.",
			Parameters:        crossParams([]string{`"source_table"`}, `"source_table":{"type":"string","minLength":1,"maxLength":30}`, `"target_table":{"type":"string","maxLength":30}`),
			ReturnDescription: `{"mapping": {"source_table": str, "target_table": str, "fields": [mapping]}, "unmapped_target_fields": [str], "unmapped_source_fields": [str], "warnings": [str]}`,
			DirectCallAllowed: true,
			Connections:       2,
			Run:               onSAP(SAPExecutor.GenerateFieldMapping),
		},
		{
			Name:              SuggestTransforms,
			Description:       "Look at sample source rows and the target's fields and suggest transforms (alpha conversion, trimming, date formats, value maps, truncation) for a mapping.",
			Parameters:        crossParams([]string{`"mapping"`}, mappingSchema, `"sample_size":{"type":"integer","minimum":1,"maximum":500}`),
			ReturnDescription: `{"suggestions": [{"target": str, "transform": str, "reason": str, "mapping": dict}], "sampled": int}`,
			DirectCallAllowed: true,
			Connections:       2,
			Run:               onSAP(SAPExecutor.SuggestTransforms),
		},
		{
			Name:              ValidateMigration,
			Description:       "Check a mapping against both systems: fields exist, target keys are mapped, transformed sample values fit the target's types and lengths.",
			Parameters:        crossParams([]string{`"mapping"`}, mappingSchema, whereParam, `"sample_size":{"type":"integer","minimum":1,"maximum":1000}`),
			ReturnDescription: `{"valid": bool, "errors": [str], "warnings": [str], "sampled": int}`,
			DirectCallAllowed: true,
			Connections:       2,
			Run:               onSAP(SAPExecutor.ValidateMigration),
		},
		{
			Name:              PreviewDataTransform,
			Description:       "Show source rows next to the rows the mapping would write to the target.",
			Parameters:        crossParams([]string{`"mapping"`}, mappingSchema, whereParam, `"rows":{"type":"integer","minimum":1,"maximum":100}`),
			ReturnDescription: `{"rows": [{"source": dict, "target": dict, "error": str}]}`,
			DirectCallAllowed: true,
			Connections:       2,
			Run:               onSAP(SAPExecutor.PreviewDataTransform),
		},
		{
			Name: ExtractTransformLoad,
			Description: "Move rows from the source table to the target table through the mapping. dry_run=true validates every row on the target and saves nothing; " +
				"the real run (dry_run=false) needs the user's approval and refuses to start without a successful dry run of the same mapping and filter.",
			Parameters: crossParams([]string{`"mapping"`, `"dry_run"`}, mappingSchema, whereParam, `"dry_run":{"type":"boolean"}`,
				`"mode":{"type":"string","enum":["insert","modify"]}`, `"max_rows":{"type":"integer","minimum":1,"maximum":100000}`),
			ReturnDescription: `{"dry_run": bool, "extracted": int, "inserted": int, "updated": int, "failed": int, "errors": [{"row": int, "key": str, "field": str, "message": str}]}`,
			NeedsApproval:     true,
			DirectCallAllowed: true,
			ModeFor: func(args map[string]any) Mode {
				if dry, _ := args["dry_run"].(bool); dry {
					return Auto
				}
				return ConfirmBefore
			},
			Connections: 2,
			Run:         onSAP(SAPExecutor.ExtractTransformLoad),
		},
		{
			Name:              ReconcileMigration,
			Description:       "Compare source and target after a load: row counts, keys missing on either side, and field values of a sample of rows.",
			Parameters:        crossParams([]string{`"mapping"`}, mappingSchema, whereParam, `"sample_size":{"type":"integer","minimum":1,"maximum":5000}`),
			ReturnDescription: `{"clean": bool, "source_count": int, "target_count": int, "missing_in_target": int, "missing_keys": [str], "extra_in_target": int, "sampled": int, "field_differences": int, "differences": [{"key": str, "field": str, "expected": str, "actual": str}]}`,
			DirectCallAllowed: true,
			Connections:       2,
			Run:               onSAP(SAPExecutor.ReconcileMigration),
		},
	}
}
