package devstack

import (
	"strconv"

	"github.com/sapagent/sapagent/internal/offlinellm"
)

// DemoRules script the offline model for `make dev` (when OFFLINE_LLM_RULES is not set) so the
// tool loop can be tried without a hosted model:
//
//	save a note titled <Title>: <text>   → save_note (asks for approval)
//	draft a note titled <Title>: <text>  → save_note with draft=true (runs at once)
//	list my notes                        → list_notes
//	export my notes                      → export_notes (runs, then asks before the model sees it)
//	think about <anything>               → streams reasoning first
//
// SAP (the workspace needs a connection; connection names stand in for IDs):
//
//	show the schema of table <T> [on <conn>]                  → execute_code: sap_get_table_schema
//	read <n> rows from table <T> [on <conn>] [where <cond>]   → execute_code: sap_read_table
//	rename material <M> [on <conn>] to <text>                 → execute_code: BAPI_MATERIAL_SAVEDATA (asks for approval)
//	map table <T> from <source> to <target>             → generate_field_mapping
//	dry run customers from <source> to <target>         → extract_transform_load, dry_run (KNA1)
//	load customers from <source> to <target>           → extract_transform_load (asks for approval)
//	reconcile customers from <source> to <target>       → reconcile_migration
//	search the index of <conn> for <query>                 → execute_code: sap_search_index (hybrid)
func DemoRules() []offlinellm.Rule {
	return append([]offlinellm.Rule{
		{Name: "save", Match: `(?i)^save a note titled (.+?): (.+)$`, Reply: "I'll save that note.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "save_note", Arguments: `{"title":"$1","body":"$2"}`}}},
		{Name: "draft", Match: `(?i)^draft a note titled (.+?): (.+)$`,
			ToolCalls: []offlinellm.ToolCallRule{{Name: "save_note", Arguments: `{"title":"$1","body":"$2","draft":true}`}}},
		{Name: "list", Match: `(?i)^list my notes`, ToolCalls: []offlinellm.ToolCallRule{{Name: "list_notes", Arguments: `{}`}}},
		{Name: "export", Match: `(?i)^export my notes`, ToolCalls: []offlinellm.ToolCallRule{{Name: "export_notes", Arguments: `{}`}}},
		{Name: "think", Match: `(?i)^think about (.+)$`, Reasoning: "Let me think about $1 step by step before answering.",
			Reply: "Here is what I concluded about $1."},
	}, sapDemoRules()...)
}

// customerMapping moves customer master data (KNA1) between systems in the demos.
const customerMapping = `{"source_table":"KNA1","target_table":"KNA1","fields":[
	{"target":"KUNNR","source":"KUNNR","transform":"alpha_in","length":10},
	{"target":"NAME1","source":"NAME1","transform":"trim"},
	{"target":"LAND1","source":"LAND1","transform":"uppercase"},
	{"target":"ORT01","source":"ORT01","transform":"direct"},
	{"target":"PSTLZ","source":"PSTLZ","transform":"direct"},
	{"target":"KTOKD","source":"KTOKD","transform":"direct"}]}`

func sapDemoRules() []offlinellm.Rule {
	code := func(script string) string { return `{"code":` + strconv.Quote(script) + `}` }
	return []offlinellm.Rule{
		{Name: "sap-schema", Match: `(?i)^show (?:me )?the schema of table (\w+)(?: on (\S+))?$`, Reply: "Let me look up the table in SAP.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: code(
				"s = sap_get_table_schema(table=\"$1\", connection_id=\"$2\")\nprint(s[\"table\"], \"-\", s[\"description\"])\nfor f in s[\"fields\"]:\n    print(f[\"name\"], f[\"type\"], f[\"length\"], f[\"description\"])")}}},
		{Name: "sap-read", Match: `(?i)^read (\d+) rows from table (\w+)(?: on (\S+))?(?: where (.+))?$`, Reply: "Reading from SAP.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: code(
				"r = sap_read_table(table=\"$2\", connection_id=\"$3\", row_count=$1, where=\"$4\")\nfor row in r[\"rows\"]:\n    print(row)\nresult = r[\"row_count\"]")}}},
		{Name: "sap-rename-material", Match: `(?i)^rename material (\w+)(?: on (\S+))? to (.+)$`, Reply: "This changes the material in SAP, so it needs your approval.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: code(
				"r = sap_execute_rfc(function=\"BAPI_MATERIAL_SAVEDATA\", connection_id=\"$2\", imports={\"HEADDATA\": {\"MATERIAL\": \"$1\"}}, tables={\"MATERIALDESCRIPTION\": [{\"LANGU\": \"E\", \"MATL_DESC\": \"$3\"}]}, commit=True)\nfor m in r[\"return\"]:\n    print(m[\"type\"], m[\"message\"])\nresult = r[\"committed\"]")}}},
		{Name: "sap-search-index", Match: `(?i)^search the index of (\S+) for (.+)$`, Reply: "Searching the SAP index.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: code(
				"r = sap_search_index(query=\"$2\", connection_id=\"$1\", mode=\"hybrid\", limit=10)\nprint(\"source:\", r[\"source\"])\nfor o in r[\"objects\"]:\n    print(o[\"type\"], o[\"name\"], \"-\", o[\"description\"])")}}},
		{Name: "etl-map", Match: `(?i)^map table (\w+) from (\S+) to (\S+)$`,
			ToolCalls: []offlinellm.ToolCallRule{{Name: "generate_field_mapping", Arguments: `{"source_connection_id":"$2","target_connection_id":"$3","source_table":"$1"}`}}},
		{Name: "etl-dry-run", Match: `(?i)^dry run customers from (\S+) to (\S+)$`,
			ToolCalls: []offlinellm.ToolCallRule{{Name: "extract_transform_load", Arguments: `{"source_connection_id":"$1","target_connection_id":"$2","dry_run":true,"mapping":` + customerMapping + `}`}}},
		{Name: "etl-load", Match: `(?i)^load customers from (\S+) to (\S+)$`, Reply: "Loading writes to the target system, so it needs your approval.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "extract_transform_load", Arguments: `{"source_connection_id":"$1","target_connection_id":"$2","dry_run":false,"mapping":` + customerMapping + `}`}}},
		{Name: "etl-reconcile", Match: `(?i)^reconcile customers from (\S+) to (\S+)$`,
			ToolCalls: []offlinellm.ToolCallRule{{Name: "reconcile_migration", Arguments: `{"source_connection_id":"$1","target_connection_id":"$2","mapping":` + customerMapping + `}`}}},
	}
}
