package tools

import (
	"context"
	"regexp"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// SAP tools (seed 000 "Tool routing"): each routes by connection_id, which may be omitted when
// the workspace has one connection. By default they are helpers of execute_code and not
// offered to the model directly (DIRECT_CALL_TOOLS changes that per tool).
const (
	SAPSearchIndex          = "sap_search_index"
	SAPGetTableSchema       = "sap_get_table_schema"
	SAPReadTable            = "sap_read_table"
	SAPExecuteRFC           = "sap_execute_rfc"
	SAPGetFunctionInterface = "sap_get_function_interface"
	SAPGetSource            = "sap_get_source"
	SAPWhereUsed            = "sap_where_used"
	SAPListCustomObjects    = "sap_list_custom_objects"
	SAPGetSystemInfo        = "sap_get_system_info"
)

// SAPExecutor runs the SAP tools on the calling user's connections (saptools.Executor
// implements it): one method per tool, validated arguments in, a JSON-ready result or a
// sentence for the model out. A new SAP tool is its definition below plus its method here; the
// worker does not compile until saptools implements it.
type SAPExecutor interface {
	SearchIndex(ctx context.Context, args map[string]any) (any, error)
	GetTableSchema(ctx context.Context, args map[string]any) (any, error)
	ReadTable(ctx context.Context, args map[string]any) (any, error)
	ExecuteRFC(ctx context.Context, args map[string]any) (any, error)
	GetFunctionInterface(ctx context.Context, args map[string]any) (any, error)
	GetSource(ctx context.Context, args map[string]any) (any, error)
	WhereUsed(ctx context.Context, args map[string]any) (any, error)
	ListCustomObjects(ctx context.Context, args map[string]any) (any, error)
	GetSystemInfo(ctx context.Context, args map[string]any) (any, error)
	CrossExecutor
}

// onSAP runs a tool as a method of the calling user's SAP executor.
func onSAP(method func(SAPExecutor, context.Context, map[string]any) (any, error)) Runner {
	return func(ctx context.Context, env Env, args map[string]any) (any, error) {
		x, err := env.SAP(ctx)
		if err != nil {
			return nil, err
		}
		return method(x, ctx, args)
	}
}

// connectionParam is shared by every SAP tool.
const connectionParam = `"connection_id":{"type":"string","description":"ID (or exact name) of the SAP connection; optional when the workspace has exactly one"}`

func sapParams(required string, props ...string) string {
	all := append([]string{connectionParam}, props...)
	req := ""
	if required != "" {
		req = `,"required":[` + required + `]`
	}
	return `{"type":"object","additionalProperties":false` + req + `,"properties":{` + strings.Join(all, ",") + `}}`
}

const objectTypes = `"enum":["TABL","PROG","FUGR","FUNC","CLAS","INTF","DDLS","ENHO","INCL","BADI","DTEL","DOMA","VIEW"]`

// SAP returns the definitions of the SAP tools.
func SAP() []Definition {
	return []Definition{
		{
			Name: SAPSearchIndex,
			Description: "Search the SAP system's index (standard and custom tables, function modules and BAPIs, classes, programs, CDS views, " +
				"enhancements, extensions) by exact name, name pattern (* is a wildcard: BAPI_SALES*, Z*ORDER*), words of descriptions, " +
				"or a question (mode semantic or hybrid). Reads the index the landscape sync built; a connection without one is searched live.",
			Parameters: sapParams(`"query"`, `"query":{"type":"string","minLength":1,"maxLength":200}`,
				`"category":{"type":"string","enum":["table","view","cds_view","function","bapi","function_group","class","interface","program","include","enhancement","extension","data_element","domain","transaction"]}`,
				`"mode":{"type":"string","enum":["keyword","semantic","hybrid"],"description":"default hybrid (keyword when no embeddings model is configured)"}`,
				`"detail":{"type":"boolean","description":"include each object's indexed text (release state, successor, package, …)"}`,
				`"object_type":{"type":"string",`+objectTypes+`}`, `"custom_only":{"type":"boolean"}`,
				`"limit":{"type":"integer","minimum":1,"maximum":200}`),
			ReturnDescription:  `{"source": "index"|"live", "mode": str, "objects": [{"type": str, "name": str, "category": str, "description": str, "package": str, "custom": bool, "release_state": str, "score": float, "body": str}], "note": str}`,
			ExecuteCodeAllowed: true,
			Connections:        1,
			Run:                onSAP(SAPExecutor.SearchIndex),
		},
		{
			Name:               SAPGetTableSchema,
			Description:        "Get a DDIC table's definition: fields with key flag, data element, domain, type, length, check table, customer appends.",
			Parameters:         sapParams(`"table"`, `"table":{"type":"string","minLength":1,"maxLength":30}`),
			ReturnDescription:  `{"table": str, "description": str, "delivery_class": str, "custom": bool, "row_count": int, "fields": [{"name": str, "key": bool, "data_element": str, "domain": str, "type": str, "length": int, "decimals": int, "description": str, "check_table": str, "appended": bool}]}`,
			ExecuteCodeAllowed: true,
			Connections:        1,
			Run:                onSAP(SAPExecutor.GetTableSchema),
		},
		{
			Name: SAPReadTable,
			Description: "Read rows of a table with RFC_READ_TABLE semantics: choose fields (their total width must stay within 512 characters), " +
				"filter with ABAP WHERE conditions such as \"LAND1 = 'DE' AND ERDAT >= '20240101'\", page with row_skip/row_count (at most 1000 rows per call).",
			Parameters: sapParams(`"table"`, `"table":{"type":"string","minLength":1,"maxLength":30}`,
				`"fields":{"type":"array","items":{"type":"string","minLength":1,"maxLength":30},"maxItems":100}`,
				`"where":{"type":"string","maxLength":4000}`,
				`"row_skip":{"type":"integer","minimum":0}`, `"row_count":{"type":"integer","minimum":1,"maximum":1000}`),
			ReturnDescription:  `{"table": str, "fields": [str], "rows": [dict of field -> str], "row_count": int}`,
			ExecuteCodeAllowed: true,
			Connections:        1,
			Run:                onSAP(SAPExecutor.ReadTable),
		},
		{
			Name: SAPExecuteRFC,
			Description: "Call a remote-enabled function module or BAPI. Reads run at once; BAPIs that change data, BAPI_TRANSACTION_COMMIT and unknown function modules need the user's approval. " +
				"Set test_run to check a write without saving. Set commit to run BAPI_TRANSACTION_COMMIT after a successful write.",
			Parameters: sapParams(`"function"`, `"function":{"type":"string","minLength":1,"maxLength":30,"pattern":"^[A-Za-z0-9_/]+$"}`,
				`"imports":{"type":"object"}`, `"tables":{"type":"object","additionalProperties":{"type":"array","items":{"type":"object"}}}`,
				`"test_run":{"type":"boolean"}`, `"commit":{"type":"boolean"}`),
			ReturnDescription:  `{"exports": dict, "tables": dict of name -> [dict], "return": [{"type": "S|E|W|I|A", "id": str, "number": str, "message": str}], "committed": bool}`,
			NeedsApproval:      true,
			ExecuteCodeAllowed: true,
			ModeFor:            rfcMode,
			Connections:        1,
			Run:                onSAP(SAPExecutor.ExecuteRFC),
		},
		{
			Name:               SAPGetFunctionInterface,
			Description:        "Get a function module's interface: import, export, changing and table parameters, exceptions, whether it is released and whether it writes.",
			Parameters:         sapParams(`"function"`, `"function":{"type":"string","minLength":1,"maxLength":30}`),
			ReturnDescription:  `{"function": str, "group": str, "description": str, "released": bool, "writes": bool, "parameters": [{"name": str, "kind": "import|export|changing|tables", "type": str, "optional": bool, "description": str}], "exceptions": [str]}`,
			ExecuteCodeAllowed: true,
			Connections:        1,
			Run:                onSAP(SAPExecutor.GetFunctionInterface),
		},
		{
			Name:               SAPGetSource,
			Description:        "Get the ABAP source of a program, class, function module, include, CDS view or enhancement.",
			Parameters:         sapParams(`"name"`, `"object_type":{"type":"string",`+objectTypes+`}`, `"name":{"type":"string","minLength":1,"maxLength":120}`),
			ReturnDescription:  `{"object_type": str, "name": str, "source": str, "lines": int}`,
			ExecuteCodeAllowed: true,
			Connections:        1,
			Run:                onSAP(SAPExecutor.GetSource),
		},
		{
			Name:               SAPWhereUsed,
			Description:        "List the custom objects that use a table, function module, class or other object, with line and snippet.",
			Parameters:         sapParams(`"name"`, `"object_type":{"type":"string",`+objectTypes+`}`, `"name":{"type":"string","minLength":1,"maxLength":120}`, `"limit":{"type":"integer","minimum":1,"maximum":500}`),
			ReturnDescription:  `{"usages": [{"object_type": str, "name": str, "line": int, "snippet": str}]}`,
			ExecuteCodeAllowed: true,
			Connections:        1,
			Run:                onSAP(SAPExecutor.WhereUsed),
		},
		{
			Name:               SAPListCustomObjects,
			Description:        "List custom (Z/Y) objects of the system, optionally of one type or matching a name pattern.",
			Parameters:         sapParams(``, `"object_type":{"type":"string",`+objectTypes+`}`, `"query":{"type":"string","maxLength":200}`, `"limit":{"type":"integer","minimum":1,"maximum":500}`),
			ReturnDescription:  `{"objects": [{"type": str, "name": str, "description": str, "package": str}]}`,
			ExecuteCodeAllowed: true,
			Connections:        1,
			Run:                onSAP(SAPExecutor.ListCustomObjects),
		},
		{
			Name:               SAPGetSystemInfo,
			Description:        "Get the SAP system's ID, type (ECC or S4HANA), release, client, database and installed components.",
			Parameters:         sapParams(``),
			ReturnDescription:  `{"system_id": str, "system_type": "ECC|S4HANA", "release": str, "client": str, "database": str, "components": [{"name": str, "release": str}]}`,
			ExecuteCodeAllowed: true,
			Connections:        1,
			Run:                onSAP(SAPExecutor.GetSystemInfo),
		},
	}
}

// writeBAPI names BAPIs that change data and, by the BAPI convention, take a TESTRUN flag: a
// test run of one saves nothing.
var writeBAPI = regexp.MustCompile(`^BAPI_\w+_(CREATE\w*|CHANGE\w*|SAVE\w*|DELETE\w*|UPDATE\w*|POST\w*|CANCEL\w*|RELEASE\w*|MAINTAIN\w*|SET\w*|ADD\w*|REMOVE\w*)$`)

// rfcMode: known reads run; a write BAPI in test-run mode (which saves nothing) runs; a commit
// always asks; anything else asks.
func rfcMode(args map[string]any) Mode {
	fn, _ := args["function"].(string)
	fn = strings.ToUpper(fn)
	commit, _ := args["commit"].(bool)
	testRun, _ := args["test_run"].(bool)
	switch {
	case commit:
		return ConfirmBefore
	case !sap.RFCWrites(fn):
		return Auto
	case writeBAPI.MatchString(fn) && testRun:
		return Auto
	}
	return ConfirmBefore
}
