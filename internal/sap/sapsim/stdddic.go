package sapsim

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// Standard DDIC that customer repositories type their own objects with: domains and data
// elements of the basis and the common application ones, and the structures RAP tables
// include. These are SAP facts (names, types, lengths), written here as data; an abapGit
// repository never holds them, so without them a loaded data element or table has no type.

// stdDomains are standard domains (and the data elements of the same name) beyond those the
// simulated tables already use (ddic.go), keyed by name.
var stdDomains = map[string]dataElement{
	"ABAP_BOOLEAN":                  {"ABAP_BOOLEAN", "CHAR", 1, 0, "Boolean (X = true, space = false)", ""},
	"ABAP_BOOL":                     {"ABAP_BOOLEAN", "CHAR", 1, 0, "Boolean (type pool ABAP)", ""},
	"BOOLEAN":                       {"BOOLEAN", "CHAR", 1, 0, "Boolean variable (X = true, space = false)", ""},
	"BOOLE":                         {"BOOLE", "CHAR", 1, 0, "Truth value: true/false", ""},
	"BOOLE_D":                       {"BOOLE", "CHAR", 1, 0, "Data element for domain BOOLE: TRUE (='X') and FALSE (=' ')", ""},
	"XSDBOOLEAN":                    {"XSDBOOLEAN", "CHAR", 1, 0, "Boolean Variable (X = True, - = False, Space = Unknown)", ""},
	"SDRAFT_UUID":                   {"SYSUUID", "RAW", 16, 0, "Draft UUID", ""},
	"XFELD":                         {"XFELD", "CHAR", 1, 0, "Checkbox", ""},
	"FLAG":                          {"FLAG", "CHAR", 1, 0, "General flag", ""},
	"XFLAG":                         {"XFLAG", "CHAR", 1, 0, "Flag", ""},
	"SYSUUID":                       {"SYSUUID", "RAW", 16, 0, "UUID in X form (binary)", ""},
	"SYSUUID_X16":                   {"SYSUUID", "RAW", 16, 0, "UUID in X form (binary)", ""},
	"SYSUUID_X":                     {"SYSUUID", "RAW", 16, 0, "UUID in X form (binary)", ""},
	"SYSUUID_C22":                   {"SYSUUID_C22", "CHAR", 22, 0, "UUID in compressed character form", ""},
	"SYSUUID_C32":                   {"SYSUUID_C32", "CHAR", 32, 0, "UUID in character form, 32 characters", ""},
	"SYSUUID_C36":                   {"SYSUUID_C36", "CHAR", 36, 0, "UUID in character form, 36 characters", ""},
	"TZNTSTMPL":                     {"TZNTSTMPL", "DEC", 21, 7, "UTC time stamp in long form (YYYYMMDDhhmmssmmmuuun)", ""},
	"TZNTSTMPS":                     {"TZNTSTMPS", "DEC", 15, 0, "UTC time stamp in short form (YYYYMMDDhhmmss)", ""},
	"TIMESTAMPL":                    {"TZNTSTMPL", "DEC", 21, 7, "UTC Time Stamp in Long Form (YYYYMMDDhhmmssmmmuuun)", ""},
	"TIMESTAMP":                     {"TZNTSTMPS", "DEC", 15, 0, "UTC Time Stamp in Short Form (YYYYMMDDhhmmss)", ""},
	"TZONREF":                       {"TZNZONE", "CHAR", 6, 0, "Time zone", ""},
	"TZNZONE":                       {"TZNZONE", "CHAR", 6, 0, "Time zone", ""},
	"ABP_CREATION_TSTMPL":           {"TZNTSTMPL", "DEC", 21, 7, "Creation Date Time", ""},
	"ABP_LASTCHANGE_TSTMPL":         {"TZNTSTMPL", "DEC", 21, 7, "Last Change Date Time", ""},
	"ABP_LOCINST_LASTCHANGE_TSTMPL": {"TZNTSTMPL", "DEC", 21, 7, "Local Instance Last Change Date Time", ""},
	"ABP_CREATION_USER":             {"SYUNAME", "CHAR", 12, 0, "Created By", ""},
	"ABP_LASTCHANGE_USER":           {"SYUNAME", "CHAR", 12, 0, "Last Changed By", ""},
	"ABP_LOCINST_LASTCHANGE_USER":   {"SYUNAME", "CHAR", 12, 0, "Local Instance Last Changed By", ""},
	"SYUNAME":                       {"SYUNAME", "CHAR", 12, 0, "User Name", ""},
	"UNAME":                         {"XUBNAME", "CHAR", 12, 0, "User Name", ""},
	"XUBNAME":                       {"XUBNAME", "CHAR", 12, 0, "User Name in User Master Record", ""},
	"SYDATUM":                       {"SYDATS", "DATS", 8, 0, "System Date", ""},
	"SYUZEIT":                       {"SYTIME", "TIMS", 6, 0, "System Time", ""},
	"DATUM":                         {"DATUM", "DATS", 8, 0, "Date", ""},
	"UZEIT":                         {"UZEIT", "TIMS", 6, 0, "Time", ""},
	"DATS":                          {"DATS", "DATS", 8, 0, "Date field (YYYYMMDD) stored as char(8)", ""},
	"TIMS":                          {"TIMS", "TIMS", 6, 0, "Time field (hhmmss), stored as char(6)", ""},
	"WAERS_CURC":                    {"WAERS", "CUKY", 5, 0, "Currency Key", "TCURC"},
	"CUKY":                          {"WAERS", "CUKY", 5, 0, "Currency Key", "TCURC"},
	"UNIT":                          {"MEINS", "UNIT", 3, 0, "Unit of Measurement", "T006"},
	"LAISO":                         {"LAISO", "CHAR", 2, 0, "Language according to ISO 639", ""},
	"LANGU":                         {"SPRAS", "LANG", 1, 0, "Language Key", ""},
	"LAND1_GP":                      {"LAND1", "CHAR", 3, 0, "Country/Region Key", "T005"},
	"REGIO":                         {"REGIO", "CHAR", 3, 0, "Region (State, Province, County)", ""},
	"KOSTL":                         {"KOSTL", "CHAR", 10, 0, "Cost Center", "CSKS"},
	"KOKRS":                         {"CACCD", "CHAR", 4, 0, "Controlling Area", ""},
	"PRCTR":                         {"PRCTR", "CHAR", 10, 0, "Profit Center", ""},
	"SAKNR":                         {"SAKNR", "CHAR", 10, 0, "G/L Account Number", ""},
	"HKONT":                         {"SAKNR", "CHAR", 10, 0, "General Ledger Account", ""},
	"EBELN":                         {"EBELN", "CHAR", 10, 0, "Purchasing Document Number", ""},
	"EBELP":                         {"EBELP", "NUMC", 5, 0, "Item Number of Purchasing Document", ""},
	"CHARG_D":                       {"CHARG", "CHAR", 10, 0, "Batch Number", ""},
	"MATNR40":                       {"MATNR", "CHAR", 40, 0, "Material Number", "MARA"},
	"WRBTR":                         {"WERT7", "CURR", 13, 2, "Amount in document currency", ""},
	"MENGE_D":                       {"MENG13", "QUAN", 13, 3, "Quantity", ""},
	"INT4":                          {"INT4", "INT4", 10, 0, "4 Byte Signed Integer", ""},
	"INT2":                          {"INT2", "INT2", 5, 0, "2 Byte Signed Integer", ""},
	"INT1":                          {"INT1", "INT1", 3, 0, "1 Byte Unsigned Integer", ""},
	"STRING":                        {"STRING", "STRG", 0, 0, "Character string of variable length", ""},
	"XSTRING":                       {"XSTRING", "RSTR", 0, 0, "Byte string of variable length", ""},
	"MSGID":                         {"ARBGB", "CHAR", 20, 0, "Message Class", ""},
	"ARBGB":                         {"ARBGB", "CHAR", 20, 0, "Application area (message class)", ""},
	"SYMSGNO":                       {"SYMSGNO", "NUMC", 3, 0, "Message Number", ""},
	"SYMSGTY":                       {"SYCHAR01", "CHAR", 1, 0, "Message Type", ""},
	"SYMSGV":                        {"SYCHAR50", "CHAR", 50, 0, "Message Variable", ""},
	"BAPI_MTYPE":                    {"SYCHAR01", "CHAR", 1, 0, "Message type: S Success, E Error, W Warning, I Info, A Abort", ""},
	"BAPI_MSG":                      {"TEXT220", "CHAR", 220, 0, "Message Text", ""},
	"TCODE":                         {"TCODE", "CHAR", 20, 0, "Transaction Code", ""},
	"PROGNAME":                      {"PROGNAME", "CHAR", 40, 0, "ABAP Program Name", ""},
	"TABNAME16":                     {"AS4TAB", "CHAR", 16, 0, "Table Name", ""},
	"DDTEXT":                        {"AS4TEXT", "CHAR", 60, 0, "Short Description of Repository Objects", ""},
	"AS4TEXT":                       {"AS4TEXT", "CHAR", 60, 0, "Short Description of Repository Objects", ""},
	"EMAIL":                         {"AD_SMTPADR", "CHAR", 241, 0, "E-Mail Address", ""},
	"AD_SMTPADR":                    {"AD_SMTPADR", "CHAR", 241, 0, "E-Mail Address", ""},
}

// builtinDomain matches the generic built-in domains: CHAR1…CHAR255, NUMC1…, TEXT1…,
// RAW1… and the type-named DEC/INT forms (CHAR44, NUMC10, RAW16, …).
var builtinDomain = regexp.MustCompile(`^(CHAR|NUMC|TEXT|RAW|SYCHAR)(\d{1,4})$`)

// builtinTypes are the predefined DDIC types with their fixed lengths, usable as domain names.
var builtinTypes = map[string]int{"CLNT": 3, "LANG": 1, "CUKY": 5, "UNIT": 3, "DATS": 8, "TIMS": 6, "INT1": 3, "INT2": 5,
	"INT4": 10, "INT8": 19, "FLTP": 16, "STRG": 0, "RSTR": 0, "UTCLONG": 27, "D16N": 16, "D34N": 34}

// standardDataElement finds a standard domain or data element by name: the simulated tables'
// data elements, the table above, then the generic built-in forms.
func standardDataElement(name string) (dataElement, bool) {
	if de, ok := dataElements[name]; ok {
		return de, true
	}
	if de, ok := stdDomains[name]; ok {
		return de, true
	}
	if m := builtinDomain.FindStringSubmatch(name); m != nil {
		n, _ := strconv.Atoi(m[2])
		typ := m[1]
		switch typ {
		case "TEXT", "SYCHAR":
			typ = "CHAR"
		}
		if n > 0 {
			return dataElement{domain: name, typ: typ, length: n, text: strings.ToLower(typ) + " " + m[2]}, true
		}
	}
	if n, ok := builtinTypes[name]; ok {
		return dataElement{domain: name, typ: name, length: n, text: "Built-in type " + name}, true
	}
	return dataElement{}, false
}

// stdStructures are standard structures that customer tables .INCLUDE.
var stdStructures = map[string][]sap.Field{
	// The RAP draft administration include every draft table of a RAP business object has.
	"SYCH_BDL_DRAFT_ADMIN_INC": {
		{Name: "DRAFTENTITYCREATIONDATETIME", Domain: "TZNTSTMPL", Type: "DEC", Length: 21, Decimals: 7, Description: "Draft Created On"},
		{Name: "DRAFTENTITYLASTCHANGEDATETIME", Domain: "TZNTSTMPL", Type: "DEC", Length: 21, Decimals: 7, Description: "Draft Last Changed On"},
		{Name: "DRAFTADMINISTRATIVEDATAUUID", Domain: "SYSUUID", Type: "RAW", Length: 16, Description: "Draft (Technical ID)"},
		{Name: "DRAFTENTITYOPERATIONCODE", Type: "CHAR", Length: 1, Description: "Draft Entity Operation Code"},
		{Name: "HASACTIVEENTITY", Type: "CHAR", Length: 1, Description: "Has active"},
		{Name: "DRAFTFIELDCHANGES", Type: "RSTR", Description: "Draft Field Changes"},
	},
}
