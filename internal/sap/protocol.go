// Package sap is how sapagent talks to SAP systems: the connector protocol's messages (this
// file, documented in docs/connector-protocol.md), the connector client with its URL guard, and
// (in sap/sim) a simulated landscape that speaks the same protocol.
//
// Every call is POST <connectorURL>/<endpoint> with a JSON body. Success is 200 with
// {"data": <response>}; failure is a 4xx/5xx with {"error": {"code", "message", "exception"}}.
package sap

// Endpoints of the connector protocol.
const (
	EndpointSystemInfo        = "system_info"
	EndpointProbeChanges      = "probe_changes"
	EndpointTableSchema       = "table_schema"
	EndpointReadTable         = "read_table"
	EndpointExecuteRFC        = "execute_rfc"
	EndpointFunctionInterface = "function_interface"
	EndpointSearchObjects     = "search_objects"
	EndpointABAPSource        = "abap_source"
	EndpointWhereUsed         = "where_used"
	EndpointWriteTable        = "write_table"
	// Index phases (seed 000 "SAP metadata indexing"): paged with Cursor/NextCursor.
	EndpointIndexCustomObjects  = "index/custom_objects"
	EndpointIndexRelationships  = "index/relationships"
	EndpointIndexCustomCode     = "index/custom_code"
	EndpointIndexCatalogContext = "index/catalog_context"
	EndpointIndexEnhancements   = "index/enhancements"
	EndpointIndexS4Extensions   = "index/s4_extensions" // S/4HANA only
)

// Headers of the connector protocol.
const (
	HeaderConnectorKey = "X-Connector-Key"
	HeaderSAPUser      = "X-SAP-User"
	HeaderSAPPassword  = "X-SAP-Password"
	// HeaderIdempotencyKey names a write request: a connector runs a key once and answers a
	// repeated key with the first answer (docs/connector-protocol.md, "Idempotent writes").
	HeaderIdempotencyKey = "Idempotency-Key"
)

// Error codes in an error body.
const (
	ErrBadRequest          = "BAD_REQUEST"           // 400: the request itself is wrong
	ErrConnectorKey        = "CONNECTOR_KEY_INVALID" // 401: X-Connector-Key missing or wrong
	ErrLogonFailed         = "LOGON_FAILED"          // 401: SAP user or password wrong
	ErrAuthorization       = "AUTHORIZATION_FAILED"  // 403: the SAP user lacks an authorization
	ErrNotFound            = "NOT_FOUND"             // 404: table, function, object unknown
	ErrSAPException        = "SAP_EXCEPTION"         // 422: the function raised an ABAP exception
	ErrNotSupported        = "NOT_SUPPORTED"         // 422: e.g. S/4 extensions on an ECC system
	ErrSystemUnavailable   = "SYSTEM_UNAVAILABLE"    // 503: the system is down or overloaded
	ErrTimeout             = "TIMEOUT"               // 504
	ErrDataBufferExceeded  = "DATA_BUFFER_EXCEEDED"  // 422: read_table row wider than 512 characters
	ErrInvalidWhereOptions = "OPTION_NOT_VALID"      // 422: read_table WHERE options do not parse
	// 422: an Idempotency-Key already used with a different request body.
	ErrIdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
)

// ErrorBody is the body of every failed call.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong; Exception is the ABAP exception name when there is one.
type ErrorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Exception string `json:"exception,omitempty"`
}

// SystemInfoRequest is the request of system_info. FullSync marks the probe that starts a full
// sync: the connector then forgets the sources it cached for earlier syncs. A health check or a
// connection test sends {} and leaves them, so it never empties the cache under a running sync.
type SystemInfoRequest struct {
	FullSync bool `json:"full_sync,omitempty"`
}

// SystemInfo is the response of system_info.
type SystemInfo struct {
	SystemID   string      `json:"system_id"`   // SID, e.g. "ECC"
	SystemType string      `json:"system_type"` // "ECC" or "S4HANA"
	Release    string      `json:"release"`     // e.g. "EHP8 FOR SAP ERP 6.0" or "S/4HANA 2023"
	BasisRel   string      `json:"basis_release"`
	Client     string      `json:"client"`
	Host       string      `json:"host"`
	Database   string      `json:"database"`
	Unicode    bool        `json:"unicode"`
	Components []Component `json:"components"`
	ChangeSeq  int64       `json:"change_seq"` // newest change-log entry
}

// Component is an installed software component.
type Component struct {
	Name    string `json:"name"`
	Release string `json:"release"`
	SP      string `json:"support_package"`
}

// ProbeChangesRequest asks for change-log entries after a seq (0: from the start).
type ProbeChangesRequest struct {
	AfterSeq int64 `json:"after_seq"`
	Limit    int   `json:"limit,omitempty"` // default 1000
}

// ProbeChangesResponse lists changed objects, oldest first.
type ProbeChangesResponse struct {
	LatestSeq int64    `json:"latest_seq"`
	Changes   []Change `json:"changes"`
	More      bool     `json:"more"`
}

// Change is one change-log entry (a transport import, an object activation, a data write).
type Change struct {
	Seq        int64  `json:"seq"`
	ObjectType string `json:"object_type"` // TABL, PROG, FUGR, CLAS, DDLS, ENHO, DATA, ...
	ObjectName string `json:"object_name"`
	ChangeType string `json:"change_type"` // created, modified, deleted
	ChangedAt  string `json:"changed_at"`  // RFC 3339
	ChangedBy  string `json:"changed_by"`
}

// TableSchemaRequest names a DDIC table.
type TableSchemaRequest struct {
	Table string `json:"table"`
}

// TableSchema is a table's DDIC definition.
type TableSchema struct {
	Table         string  `json:"table"`
	Description   string  `json:"description"`
	DeliveryClass string  `json:"delivery_class"` // A, C, L, G, E, S, W
	TableClass    string  `json:"table_class"`    // TRANSP, CLUSTER, POOL, VIEW
	Custom        bool    `json:"custom"`         // Z/Y table
	Fields        []Field `json:"fields"`
	RowCount      int     `json:"row_count"`
}

// Field is one table field with its data element and domain.
type Field struct {
	Name        string `json:"name"`
	Key         bool   `json:"key"`
	DataElement string `json:"data_element"`
	Domain      string `json:"domain"`
	Type        string `json:"type"` // ABAP DDIC type: CHAR, NUMC, DATS, TIMS, CURR, QUAN, DEC, INT4, CUKY, UNIT, CLNT, LANG
	Length      int    `json:"length"`
	Decimals    int    `json:"decimals,omitempty"`
	Description string `json:"description"`
	CheckTable  string `json:"check_table,omitempty"`
	Appended    bool   `json:"appended,omitempty"` // customer append (ZZ field)
}

// ReadTableRequest follows RFC_READ_TABLE: optional field list (all fields when empty),
// WHERE options as ABAP condition lines joined with spaces, row skip and count (0: all).
type ReadTableRequest struct {
	Table    string   `json:"table"`
	Fields   []string `json:"fields,omitempty"`
	Options  []string `json:"options,omitempty"`
	RowSkip  int      `json:"row_skip,omitempty"`
	RowCount int      `json:"row_count,omitempty"`
}

// ReadTableResponse carries rows as arrays in the order of Fields. Values are strings as in
// RFC_READ_TABLE's DATA lines, trimmed.
type ReadTableResponse struct {
	Fields []ReadField `json:"fields"`
	Rows   [][]string  `json:"rows"`
}

// ReadField is one column of a read_table answer (RFC_READ_TABLE's FIELDS table).
type ReadField struct {
	Name        string `json:"name"`
	Offset      int    `json:"offset"`
	Length      int    `json:"length"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

// MaxReadTableWidth is RFC_READ_TABLE's row buffer: wider selections fail with
// DATA_BUFFER_EXCEEDED and must name fewer fields.
const MaxReadTableWidth = 512

// ExecuteRFCRequest calls a function module. Import parameters are scalars or structures
// (objects); tables are arrays of objects. TestRun asks a BAPI to check without saving
// (the function's TESTRUN parameter, when it has one). Writes are staged per Session until
// BAPI_TRANSACTION_COMMIT runs in the same session; Commit runs it right after the call
// when the call returned no error message.
type ExecuteRFCRequest struct {
	Function string                      `json:"function"`
	Imports  map[string]any              `json:"imports,omitempty"`
	Tables   map[string][]map[string]any `json:"tables,omitempty"`
	Session  string                      `json:"session,omitempty"`
	Commit   bool                        `json:"commit,omitempty"`
	TestRun  bool                        `json:"test_run,omitempty"`
}

// ExecuteRFCResponse returns export parameters, tables and BAPIRET2 messages.
type ExecuteRFCResponse struct {
	Exports   map[string]any              `json:"exports,omitempty"`
	Tables    map[string][]map[string]any `json:"tables,omitempty"`
	Return    []BAPIReturn                `json:"return"`
	Committed bool                        `json:"committed"`
}

// BAPIReturn is a BAPIRET2 line. Type is S(uccess), E(rror), W(arning), I(nfo) or A(bort).
type BAPIReturn struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Number  string `json:"number"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// FunctionInterfaceRequest names a function module.
type FunctionInterfaceRequest struct {
	Function string `json:"function"`
}

// FunctionInterface describes a function module's parameters.
type FunctionInterface struct {
	Function      string      `json:"function"`
	Group         string      `json:"group"`
	Description   string      `json:"description"`
	RemoteEnabled bool        `json:"remote_enabled"`
	Released      bool        `json:"released"` // released API (Cloudification Repository)
	Writes        bool        `json:"writes"`   // changes data (needs a commit)
	Parameters    []Parameter `json:"parameters"`
	Exceptions    []string    `json:"exceptions,omitempty"`
}

// Parameter is one function module parameter.
type Parameter struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"` // import, export, changing, tables
	Type        string `json:"type"` // data element, structure or table type
	Optional    bool   `json:"optional"`
	Default     string `json:"default,omitempty"`
	Description string `json:"description"`
}

// SearchObjectsRequest searches the repository by name or description (case-insensitive,
// "*" wildcards allowed).
type SearchObjectsRequest struct {
	Query      string `json:"query"`
	ObjectType string `json:"object_type,omitempty"` // TABL, PROG, FUGR, FUNC, CLAS, DDLS, ENHO, BADI, ...
	CustomOnly bool   `json:"custom_only,omitempty"`
	Limit      int    `json:"limit,omitempty"` // default 50
}

// SearchObjectsResponse lists matches.
type SearchObjectsResponse struct {
	Objects []ObjectRef `json:"objects"`
}

// ObjectRef names a repository object.
type ObjectRef struct {
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Package     string `json:"package"`
	Custom      bool   `json:"custom"`
}

// ABAPSourceRequest names a source-code object (PROG, CLAS, FUNC, DDLS, ENHO, INCL).
type ABAPSourceRequest struct {
	ObjectType string `json:"object_type"`
	Name       string `json:"name"`
}

// ABAPSource is an object's source code.
type ABAPSource struct {
	ObjectType string `json:"object_type"`
	Name       string `json:"name"`
	Source     string `json:"source"`
	Lines      int    `json:"lines"`
}

// WhereUsedRequest asks which objects use an object.
type WhereUsedRequest struct {
	ObjectType string `json:"object_type,omitempty"`
	Name       string `json:"name"`
	Limit      int    `json:"limit,omitempty"`
}

// WhereUsedResponse lists the using objects.
type WhereUsedResponse struct {
	Usages []Usage `json:"usages"`
}

// Usage is one place that uses the object.
type Usage struct {
	ObjectType string `json:"object_type"`
	Name       string `json:"name"`
	Line       int    `json:"line,omitempty"`
	Snippet    string `json:"snippet,omitempty"`
}

// WriteTableRequest writes rows into a table by key (the connector's Z_SAPAGENT_WRITE_TABLE,
// used by extract_transform_load). Mode "insert" fails on existing keys; "modify" upserts.
// TestRun validates every row (types, lengths, keys, check tables) and saves nothing.
type WriteTableRequest struct {
	Table   string              `json:"table"`
	Mode    string              `json:"mode"` // insert, modify
	Rows    []map[string]string `json:"rows"`
	TestRun bool                `json:"test_run,omitempty"`
}

// WriteTableResponse counts what was (or, in a test run, would be) written.
type WriteTableResponse struct {
	Inserted int          `json:"inserted"`
	Updated  int          `json:"updated"`
	Errors   []RowError   `json:"errors,omitempty"`
	Return   []BAPIReturn `json:"return"`
}

// RowError says why one row was refused.
type RowError struct {
	Row     int    `json:"row"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// IndexRequest pages through an index phase.
type IndexRequest struct {
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"` // default 200, at most 1000
	// AfterSeq > 0 asks for a delta: only items of objects changed (created or modified) after
	// this change-log seq. Deleted objects are in probe_changes (change_type "deleted").
	AfterSeq int64 `json:"after_seq,omitempty"`
}

// IndexPage is one page of an index phase. Items' shape depends on the phase (see
// docs/connector-protocol.md); NextCursor is empty on the last page.
type IndexPage struct {
	Items      []map[string]any `json:"items"`
	NextCursor string           `json:"next_cursor,omitempty"`
	Total      int              `json:"total"`
}

// Error is a failed connector call: the HTTP status and the error body's detail. The simulator
// returns it in-process and the client decodes it from responses.
type Error struct {
	Status int
	ErrorDetail
}

func (e *Error) Error() string {
	if e.Exception != "" {
		return e.Code + " (" + e.Exception + "): " + e.Message
	}
	return e.Code + ": " + e.Message
}
