package sapsim

import (
	"sort"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// dataElement is a DDIC data element with its domain's technical type.
type dataElement struct {
	domain   string
	typ      string
	length   int
	decimals int
	text     string
	check    string // check table of the domain's value set
}

// dataElements are the DDIC data elements the simulated tables use (lengths as in ECC; S/4HANA
// overrides MATNR to 40 characters, as the real system does).
var dataElements = map[string]dataElement{
	"MANDT":              {"MANDT", "CLNT", 3, 0, "Client", "T000"},
	"MTEXT":              {"TEXT25", "CHAR", 25, 0, "Client name", ""},
	"ORT01":              {"TEXT35", "CHAR", 35, 0, "City", ""},
	"WAERS":              {"WAERS", "CUKY", 5, 0, "Currency Key", "TCURC"},
	"BUKRS":              {"BUKRS", "CHAR", 4, 0, "Company Code", "T001"},
	"BUTXT":              {"TEXT25", "CHAR", 25, 0, "Name of Company Code or Company", ""},
	"LAND1":              {"LAND1", "CHAR", 3, 0, "Country/Region Key", "T005"},
	"SPRAS":              {"SPRAS", "LANG", 1, 0, "Language Key", ""},
	"LANDX":              {"TEXT15", "CHAR", 15, 0, "Country/Region Name", ""},
	"KTOPL":              {"KTOPL", "CHAR", 4, 0, "Chart of Accounts", ""},
	"WERKS":              {"WERKS", "CHAR", 4, 0, "Plant", "T001W"},
	"NAME1":              {"NAME", "CHAR", 35, 0, "Name", ""},
	"LGORT":              {"LGORT", "CHAR", 4, 0, "Storage Location", ""},
	"LGOBE":              {"TEXT16", "CHAR", 16, 0, "Description of Storage Location", ""},
	"LTEXT":              {"TEXT40", "CHAR", 40, 0, "Long Text", ""},
	"CDOBJECTCL":         {"CDOBJECTCL", "CHAR", 15, 0, "Object class", ""},
	"CDOBJECTV":          {"CDOBJECTV", "CHAR", 90, 0, "Object value", ""},
	"CDCHANGENR":         {"CDCHANGENR", "CHAR", 10, 0, "Document change number", ""},
	"CDUSERNAME":         {"XUBNAME", "CHAR", 12, 0, "User name of the person responsible in change document", ""},
	"CDDATUM":            {"DATUM", "DATS", 8, 0, "Creation date of the change document", ""},
	"CDUZEIT":            {"UZEIT", "TIMS", 6, 0, "Time changed", ""},
	"CDTCODE":            {"TCODE", "CHAR", 20, 0, "Transaction in which a change was made", ""},
	"CDCHNGINDH":         {"CDCHNGIND", "CHAR", 1, 0, "Application object change type (U, I, E, D)", ""},
	"TABNAME":            {"AS4TAB", "CHAR", 30, 0, "Table Name", ""},
	"CDTABKEY":           {"CDTABKEY", "CHAR", 70, 0, "Changed table record key", ""},
	"FIELDNAME":          {"FDNAME", "CHAR", 30, 0, "Field Name", ""},
	"CDCHNGIND":          {"CDCHNGIND", "CHAR", 1, 0, "Change Type (U, I, S, D)", ""},
	"CDFLDVALN":          {"CDFLDVAL", "CHAR", 254, 0, "New contents of changed field", ""},
	"CDFLDVALO":          {"CDFLDVAL", "CHAR", 254, 0, "Old contents of changed field", ""},
	"MSEHI":              {"MEINS", "UNIT", 3, 0, "Unit of Measurement", "T006"},
	"DIMID":              {"DIMID", "CHAR", 6, 0, "Dimension key", ""},
	"MATKL":              {"MATKL", "CHAR", 9, 0, "Material Group", "T023"},
	"WGBEZ":              {"TEXT20", "CHAR", 20, 0, "Material Group Description", ""},
	"MTART":              {"MTART", "CHAR", 4, 0, "Material Type", "T134"},
	"VKORG":              {"VKORG", "CHAR", 4, 0, "Sales Organization", "TVKO"},
	"VTWEG":              {"VTWEG", "CHAR", 2, 0, "Distribution Channel", "TVTW"},
	"SPART":              {"SPART", "CHAR", 2, 0, "Division", "TSPA"},
	"VTEXT":              {"TEXT20", "CHAR", 20, 0, "Description", ""},
	"MATNR":              {"MATNR", "CHAR", 18, 0, "Material Number", "MARA"},
	"ERSDA":              {"DATUM", "DATS", 8, 0, "Created On", ""},
	"ERNAM":              {"USNAM", "CHAR", 12, 0, "Name of Person Responsible for Creating the Object", ""},
	"LAEDA":              {"DATUM", "DATS", 8, 0, "Date of Last Change", ""},
	"MBRSH":              {"MBRSH", "CHAR", 1, 0, "Industry sector", ""},
	"MEINS":              {"MEINS", "UNIT", 3, 0, "Base Unit of Measure", "T006"},
	"BRGEW":              {"MENG13", "QUAN", 13, 3, "Gross Weight", ""},
	"NTGEW":              {"MENG13", "QUAN", 13, 3, "Net Weight", ""},
	"GEWEI":              {"MEINS", "UNIT", 3, 0, "Weight Unit", "T006"},
	"MAKTX":              {"TEXT40", "CHAR", 40, 0, "Material description", ""},
	"DISMM":              {"DISMM", "CHAR", 2, 0, "MRP Type", ""},
	"EKGRP":              {"EKGRP", "CHAR", 3, 0, "Purchasing Group", ""},
	"LABST":              {"MENG13", "QUAN", 13, 3, "Valuation-Unrestricted-Use Stock", ""},
	"BWKEY":              {"BWKEY", "CHAR", 4, 0, "Valuation Area", ""},
	"VPRSV":              {"VPRSV", "CHAR", 1, 0, "Price control indicator", ""},
	"VERPR":              {"WERT11", "CURR", 11, 2, "Moving Average Price", ""},
	"STPRS":              {"WERT11", "CURR", 11, 2, "Standard price", ""},
	"PEINH":              {"PACK3", "DEC", 5, 0, "Price Unit", ""},
	"KUNNR":              {"KUNNR", "CHAR", 10, 0, "Customer Number", "KNA1"},
	"PSTLZ":              {"PSTLZ", "CHAR", 10, 0, "Postal Code", ""},
	"STRAS":              {"TEXT35", "CHAR", 35, 0, "Street and House Number", ""},
	"TELF1":              {"TEXT16", "CHAR", 16, 0, "First telephone number", ""},
	"KTOKD":              {"KTOKD", "CHAR", 4, 0, "Customer Account Group", ""},
	"ERDAT":              {"DATUM", "DATS", 8, 0, "Date on Which Record Was Created", ""},
	"STCEG":              {"STCEG", "CHAR", 20, 0, "VAT Registration Number", ""},
	"AKONT":              {"SAKNR", "CHAR", 10, 0, "Reconciliation Account in General Ledger", ""},
	"ZTERM":              {"DZTERM", "CHAR", 4, 0, "Terms of Payment Key", ""},
	"KDGRP":              {"KDGRP", "CHAR", 2, 0, "Customer Group", ""},
	"LIFNR":              {"LIFNR", "CHAR", 10, 0, "Account Number of Supplier", "LFA1"},
	"KTOKK":              {"KTOKK", "CHAR", 4, 0, "Supplier Account Group", ""},
	"EKORG":              {"EKORG", "CHAR", 4, 0, "Purchasing Organization", ""},
	"VBELN":              {"VBELN", "CHAR", 10, 0, "Sales and Distribution Document Number", ""},
	"AUART":              {"AUART", "CHAR", 4, 0, "Sales Document Type", ""},
	"NETWR":              {"WERTV8", "CURR", 15, 2, "Net Value in Document Currency", ""},
	"POSNR":              {"POSNR", "NUMC", 6, 0, "Item number of the SD document", ""},
	"KWMENG":             {"MENG15", "QUAN", 15, 3, "Cumulative Order Quantity in Sales Units", ""},
	"VRKME":              {"MEINS", "UNIT", 3, 0, "Sales unit", "T006"},
	"ETENR":              {"ETENR", "NUMC", 4, 0, "Delivery Schedule Line Number", ""},
	"EDATU":              {"DATUM", "DATS", 8, 0, "Schedule line date", ""},
	"WMENG":              {"MENG13", "QUAN", 13, 3, "Order quantity in sales units", ""},
	"LFIMG":              {"MENG13", "QUAN", 13, 3, "Actual quantity delivered", ""},
	"FKIMG":              {"MENG13", "QUAN", 13, 3, "Actual Invoiced Quantity", ""},
	"BELNR":              {"BELNR", "CHAR", 10, 0, "Accounting Document Number", ""},
	"GJAHR":              {"GJAHR", "NUMC", 4, 0, "Fiscal Year", ""},
	"BLART":              {"BLART", "CHAR", 2, 0, "Document Type", ""},
	"BUDAT":              {"DATUM", "DATS", 8, 0, "Posting Date in the Document", ""},
	"BKTXT":              {"TEXT25", "CHAR", 25, 0, "Document Header Text", ""},
	"BUZEI":              {"BUZEI", "NUMC", 3, 0, "Number of Line Item Within Accounting Document", ""},
	"SHKZG":              {"SHKZG", "CHAR", 1, 0, "Debit/Credit Indicator", ""},
	"DMBTR":              {"WERT7", "CURR", 13, 2, "Amount in Local Currency", ""},
	"HKONT":              {"SAKNR", "CHAR", 10, 0, "General Ledger Account", ""},
	"SAKNR":              {"SAKNR", "CHAR", 10, 0, "G/L Account Number", ""},
	"TXT50":              {"TEXT50", "CHAR", 50, 0, "G/L Account Long Text", ""},
	"KOKRS":              {"KOKRS", "CHAR", 4, 0, "Controlling Area", ""},
	"KOSTL":              {"KOSTL", "CHAR", 10, 0, "Cost Center", ""},
	"DATBI":              {"DATUM", "DATS", 8, 0, "Valid To Date", ""},
	"VERAK":              {"TEXT20", "CHAR", 20, 0, "Person Responsible", ""},
	"EBELN":              {"EBELN", "CHAR", 10, 0, "Purchasing Document Number", ""},
	"BSART":              {"ESART", "CHAR", 4, 0, "Purchasing Document Type", ""},
	"BEDAT":              {"DATUM", "DATS", 8, 0, "Purchasing Document Date", ""},
	"EBELP":              {"EBELP", "NUMC", 5, 0, "Item Number of Purchasing Document", ""},
	"MENGE":              {"MENG13", "QUAN", 13, 3, "Quantity", ""},
	"NETPR":              {"WERT11", "CURR", 11, 2, "Net Price", ""},
	"BANFN":              {"BANFN", "CHAR", 10, 0, "Purchase Requisition Number", ""},
	"BNFPO":              {"BNFPO", "NUMC", 5, 0, "Item Number of Purchase Requisition", ""},
	"MBLNR":              {"MBLNR", "CHAR", 10, 0, "Number of Material Document", ""},
	"MJAHR":              {"MJAHR", "NUMC", 4, 0, "Material Document Year", ""},
	"ZEILE":              {"MBLPO", "NUMC", 4, 0, "Item in Material Document", ""},
	"BWART":              {"BWART", "CHAR", 3, 0, "Movement Type (Inventory Management)", ""},
	"ADRNR":              {"ADRNR", "CHAR", 10, 0, "Address", ""},
	"DATE_FROM":          {"DATUM", "DATS", 8, 0, "Valid-from date", ""},
	"STREET":             {"TEXT60", "CHAR", 60, 0, "Street", ""},
	"CITY1":              {"TEXT40", "CHAR", 40, 0, "City", ""},
	"POST_CODE1":         {"CHAR10", "CHAR", 10, 0, "City postal code", ""},
	"COUNTRY":            {"LAND1", "CHAR", 3, 0, "Country/Region Key", "T005"},
	"RLDNR":              {"FINS_LEDGER", "CHAR", 2, 0, "Ledger in General Ledger Accounting", ""},
	"DOCLN":              {"DOCLN6", "CHAR", 6, 0, "Six-Character Posting Item for Ledger", ""},
	"RACCT":              {"SAKNR", "CHAR", 10, 0, "Account Number", ""},
	"HSL":                {"WERTV12", "CURR", 23, 2, "Amount in Company Code Currency", ""},
	"PARTNER":            {"BU_PARTNER", "CHAR", 10, 0, "Business Partner Number", ""},
	"BU_TYPE":            {"BU_TYPE", "CHAR", 1, 0, "Business partner category", ""},
	"NAME_ORG1":          {"BU_NAMEOR1", "CHAR", 40, 0, "Name 1 of organization", ""},
	"ZZ_LOYALTY_TIER":    {"ZD_LOYALTY", "CHAR", 10, 0, "Loyalty tier (customer append)", ""},
	"ZZ_LEGACY_ID":       {"ZD_LEGACY", "CHAR", 20, 0, "Legacy system material ID (customer append)", ""},
	"ZBONUS_PCT":         {"ZD_PCT", "DEC", 5, 2, "Bonus percentage", ""},
	"ZRATING":            {"ZD_RATING", "CHAR", 1, 0, "Customer rating A-D", ""},
	"YY1_SUSTAINABILITY": {"YY1_SUST", "CHAR", 20, 0, "Sustainability class (key-user field)", ""},
}

// fieldSpec names a field and its data element (the field name when dtel is empty).
type fieldSpec struct {
	name, dtel string
	key        bool
	appended   bool
}

func k(name string) fieldSpec           { return fieldSpec{name: name, key: true} }
func kd(name, dtel string) fieldSpec    { return fieldSpec{name: name, dtel: dtel, key: true} }
func f(name string) fieldSpec           { return fieldSpec{name: name} }
func fd(name, dtel string) fieldSpec    { return fieldSpec{name: name, dtel: dtel} }
func appendField(name string) fieldSpec { return fieldSpec{name: name, appended: true} }

type tableSpec struct {
	name, text, delivery string
	fields               []fieldSpec
	only                 string // "ECC" or "S4HANA": the table exists only there
	authGroup            string // S_TABU_DIS authorization group
}

// standardTables are the simulated DDIC tables (keys and fields follow SAP's; field lists are
// the commonly used subset).
var standardTables = []tableSpec{
	{name: "T000", text: "Clients", delivery: "G", fields: []fieldSpec{k("MANDT"), f("MTEXT"), f("ORT01"), f("WAERS")}},
	{name: "T001", text: "Company Codes", delivery: "C", fields: []fieldSpec{k("MANDT"), k("BUKRS"), f("BUTXT"), f("ORT01"), f("LAND1"), f("WAERS"), f("SPRAS"), f("KTOPL")}},
	{name: "T001W", text: "Plants/Branches", delivery: "C", fields: []fieldSpec{k("MANDT"), k("WERKS"), f("NAME1"), f("BWKEY"), f("LAND1"), f("ORT01")}},
	{name: "T001L", text: "Storage Locations", delivery: "C", fields: []fieldSpec{k("MANDT"), k("WERKS"), k("LGORT"), f("LGOBE")}},
	{name: "T005", text: "Countries/Regions", delivery: "C", fields: []fieldSpec{k("MANDT"), k("LAND1"), f("WAERS"), f("SPRAS")}},
	{name: "T005T", text: "Country/Region Names", delivery: "C", fields: []fieldSpec{k("MANDT"), k("SPRAS"), k("LAND1"), f("LANDX")}},
	{name: "TCURC", text: "Currency Codes", delivery: "C", fields: []fieldSpec{k("MANDT"), k("WAERS"), f("LTEXT")}},
	{name: "T006", text: "Units of Measurement", delivery: "C", fields: []fieldSpec{k("MANDT"), k("MSEHI"), f("DIMID")}},
	{name: "T023", text: "Material Groups", delivery: "C", fields: []fieldSpec{k("MANDT"), k("MATKL"), f("WGBEZ")}},
	{name: "T134", text: "Material Types", delivery: "C", fields: []fieldSpec{k("MANDT"), k("MTART"), f("LTEXT")}},
	{name: "TVKO", text: "Organizational Unit: Sales Organizations", delivery: "C", fields: []fieldSpec{k("MANDT"), k("VKORG"), f("WAERS"), f("BUKRS")}},
	{name: "TVTW", text: "Organizational Unit: Distribution Channels", delivery: "C", fields: []fieldSpec{k("MANDT"), k("VTWEG"), f("VTEXT")}},
	{name: "TSPA", text: "Organizational Unit: Sales Divisions", delivery: "C", fields: []fieldSpec{k("MANDT"), k("SPART"), f("VTEXT")}},
	{name: "MARA", text: "General Material Data", delivery: "A", fields: []fieldSpec{k("MANDT"), k("MATNR"), f("ERSDA"), f("ERNAM"), f("LAEDA"), f("MTART"), f("MBRSH"), f("MATKL"), f("MEINS"), f("BRGEW"), f("NTGEW"), f("GEWEI"), f("SPART")}},
	{name: "MAKT", text: "Material Descriptions", delivery: "A", fields: []fieldSpec{k("MANDT"), k("MATNR"), k("SPRAS"), f("MAKTX")}},
	{name: "MARC", text: "Plant Data for Material", delivery: "A", fields: []fieldSpec{k("MANDT"), k("MATNR"), k("WERKS"), f("DISMM"), f("EKGRP")}},
	{name: "MARD", text: "Storage Location Data for Material", delivery: "A", fields: []fieldSpec{k("MANDT"), k("MATNR"), k("WERKS"), k("LGORT"), f("LABST")}},
	{name: "MBEW", text: "Material Valuation", delivery: "A", fields: []fieldSpec{k("MANDT"), k("MATNR"), k("BWKEY"), f("VPRSV"), f("VERPR"), f("STPRS"), f("PEINH")}},
	{name: "MVKE", text: "Sales Data for Material", delivery: "A", fields: []fieldSpec{k("MANDT"), k("MATNR"), k("VKORG"), k("VTWEG")}},
	{name: "KNA1", text: "General Data in Customer Master", delivery: "A", fields: []fieldSpec{k("MANDT"), k("KUNNR"), f("LAND1"), f("NAME1"), f("ORT01"), f("PSTLZ"), f("STRAS"), f("TELF1"), f("KTOKD"), f("ERDAT"), f("ERNAM"), f("STCEG")}},
	{name: "KNB1", text: "Customer Master (Company Code)", delivery: "A", fields: []fieldSpec{k("MANDT"), k("KUNNR"), k("BUKRS"), f("AKONT"), f("ZTERM")}},
	{name: "KNVV", text: "Customer Master Sales Data", delivery: "A", fields: []fieldSpec{k("MANDT"), k("KUNNR"), k("VKORG"), k("VTWEG"), k("SPART"), f("KDGRP"), f("WAERS"), f("ZTERM")}},
	{name: "LFA1", text: "Supplier Master (General Section)", delivery: "A", fields: []fieldSpec{k("MANDT"), k("LIFNR"), f("LAND1"), f("NAME1"), f("ORT01"), f("PSTLZ"), f("STRAS"), f("KTOKK"), f("ERDAT"), f("STCEG")}},
	{name: "LFB1", text: "Supplier Master (Company Code)", delivery: "A", fields: []fieldSpec{k("MANDT"), k("LIFNR"), k("BUKRS"), f("AKONT"), f("ZTERM")}},
	{name: "LFM1", text: "Supplier master record purchasing organization data", delivery: "A", fields: []fieldSpec{k("MANDT"), k("LIFNR"), k("EKORG"), f("WAERS"), f("ZTERM")}},
	{name: "VBAK", text: "Sales Document: Header Data", delivery: "A", fields: []fieldSpec{k("MANDT"), k("VBELN"), f("ERDAT"), f("ERNAM"), f("AUART"), f("VKORG"), f("VTWEG"), f("SPART"), f("KUNNR"), f("NETWR"), fd("WAERK", "WAERS")}},
	{name: "VBAP", text: "Sales Document: Item Data", delivery: "A", fields: []fieldSpec{k("MANDT"), k("VBELN"), k("POSNR"), f("MATNR"), f("KWMENG"), f("VRKME"), f("NETWR"), fd("WAERK", "WAERS"), f("WERKS")}},
	{name: "VBEP", text: "Sales Document: Schedule Line Data", delivery: "A", fields: []fieldSpec{k("MANDT"), k("VBELN"), k("POSNR"), k("ETENR"), f("EDATU"), f("WMENG")}},
	{name: "LIKP", text: "SD Document: Delivery Header Data", delivery: "A", fields: []fieldSpec{k("MANDT"), k("VBELN"), f("ERDAT"), f("KUNNR"), fd("VSTEL", "WERKS")}},
	{name: "LIPS", text: "SD document: Delivery: Item data", delivery: "A", fields: []fieldSpec{k("MANDT"), k("VBELN"), k("POSNR"), f("MATNR"), f("LFIMG"), f("WERKS")}},
	{name: "VBRK", text: "Billing Document: Header Data", delivery: "A", fields: []fieldSpec{k("MANDT"), k("VBELN"), fd("FKDAT", "ERDAT"), fd("KUNAG", "KUNNR"), f("NETWR"), fd("WAERK", "WAERS"), f("BUKRS")}},
	{name: "VBRP", text: "Billing Document: Item Data", delivery: "A", fields: []fieldSpec{k("MANDT"), k("VBELN"), k("POSNR"), f("MATNR"), f("FKIMG"), f("NETWR")}},
	{name: "BKPF", text: "Accounting Document Header", delivery: "A", authGroup: "FI", fields: []fieldSpec{k("MANDT"), k("BUKRS"), k("BELNR"), k("GJAHR"), f("BLART"), f("BUDAT"), fd("BLDAT", "BUDAT"), f("BKTXT"), f("WAERS")}},
	{name: "BSEG", text: "Accounting Document Segment", delivery: "L", authGroup: "FI", fields: []fieldSpec{k("MANDT"), k("BUKRS"), k("BELNR"), k("GJAHR"), k("BUZEI"), f("SHKZG"), f("DMBTR"), f("HKONT"), f("KUNNR"), f("LIFNR")}},
	{name: "SKA1", text: "G/L Account Master (Chart of Accounts)", delivery: "A", authGroup: "FI", fields: []fieldSpec{k("MANDT"), k("KTOPL"), k("SAKNR"), fd("XBILK", "SHKZG")}},
	{name: "SKAT", text: "G/L Account Master Record (Chart of Accounts: Description)", delivery: "A", authGroup: "FI", fields: []fieldSpec{k("MANDT"), k("SPRAS"), k("KTOPL"), k("SAKNR"), f("TXT50")}},
	{name: "CSKS", text: "Cost Center Master Data", delivery: "A", authGroup: "FI", fields: []fieldSpec{k("MANDT"), k("KOKRS"), k("KOSTL"), k("DATBI"), f("BUKRS"), f("VERAK")}},
	{name: "EKKO", text: "Purchasing Document Header", delivery: "A", fields: []fieldSpec{k("MANDT"), k("EBELN"), f("BUKRS"), f("BSART"), f("LIFNR"), f("EKORG"), f("EKGRP"), f("BEDAT"), f("WAERS")}},
	{name: "EKPO", text: "Purchasing Document Item", delivery: "A", fields: []fieldSpec{k("MANDT"), k("EBELN"), k("EBELP"), f("MATNR"), f("WERKS"), f("MENGE"), f("MEINS"), f("NETPR")}},
	{name: "EBAN", text: "Purchase Requisition", delivery: "A", fields: []fieldSpec{k("MANDT"), k("BANFN"), k("BNFPO"), f("MATNR"), f("WERKS"), f("MENGE"), f("EKGRP")}},
	{name: "MKPF", text: "Header: Material Document", delivery: "A", only: "ECC", fields: []fieldSpec{k("MANDT"), k("MBLNR"), k("MJAHR"), f("BUDAT"), fd("USNAM", "ERNAM")}},
	{name: "MSEG", text: "Document Segment: Material", delivery: "A", only: "ECC", fields: []fieldSpec{k("MANDT"), k("MBLNR"), k("MJAHR"), k("ZEILE"), f("BWART"), f("MATNR"), f("WERKS"), f("LGORT"), f("MENGE")}},
	{name: "ADRC", text: "Addresses (Business Address Services)", delivery: "A", fields: []fieldSpec{kd("CLIENT", "MANDT"), kd("ADDRNUMBER", "ADRNR"), k("DATE_FROM"), f("STREET"), f("CITY1"), f("POST_CODE1"), f("COUNTRY")}},
	{name: "MATDOC", text: "Material Documents", delivery: "A", only: "S4HANA", fields: []fieldSpec{k("MANDT"), k("MBLNR"), k("MJAHR"), k("ZEILE"), f("BWART"), f("MATNR"), f("WERKS"), f("LGORT"), f("MENGE"), f("BUDAT")}},
	{name: "ACDOCA", text: "Universal Journal Entry Line Items", delivery: "A", only: "S4HANA", authGroup: "FI", fields: []fieldSpec{kd("RCLNT", "MANDT"), k("RLDNR"), kd("RBUKRS", "BUKRS"), k("GJAHR"), k("BELNR"), k("DOCLN"), f("RACCT"), f("HSL"), fd("RHCUR", "WAERS"), f("BUDAT")}},
	{name: "BUT000", text: "BP: General data I", delivery: "A", only: "S4HANA", fields: []fieldSpec{kd("CLIENT", "MANDT"), k("PARTNER"), f("BU_TYPE"), f("NAME_ORG1")}},
	// Change documents: writes through write_table and committed BAPIs add rows (changes.go).
	{name: "CDHDR", text: "Change document header", delivery: "A", fields: []fieldSpec{kd("MANDANT", "MANDT"), kd("OBJECTCLAS", "CDOBJECTCL"),
		kd("OBJECTID", "CDOBJECTV"), kd("CHANGENR", "CDCHANGENR"), fd("USERNAME", "CDUSERNAME"), fd("UDATE", "CDDATUM"), fd("UTIME", "CDUZEIT"),
		fd("TCODE", "CDTCODE"), fd("CHANGE_IND", "CDCHNGINDH")}},
	{name: "CDPOS", text: "Change document items", delivery: "A", fields: []fieldSpec{kd("MANDANT", "MANDT"), kd("OBJECTCLAS", "CDOBJECTCL"),
		kd("OBJECTID", "CDOBJECTV"), kd("CHANGENR", "CDCHANGENR"), kd("TABNAME", "TABNAME"), kd("TABKEY", "CDTABKEY"), kd("FNAME", "FIELDNAME"),
		kd("CHNGIND", "CDCHNGIND"), fd("VALUE_NEW", "CDFLDVALN"), fd("VALUE_OLD", "CDFLDVALO")}},
	{name: "BUT020", text: "BP: Addresses", delivery: "A", only: "S4HANA", fields: []fieldSpec{kd("CLIENT", "MANDT"), k("PARTNER"), kd("ADDRNUMBER", "ADRNR")}},
}

// customTables are customer (Z) tables of the ECC system.
var customTables = []tableSpec{
	{name: "ZSALES_BONUS", text: "Sales bonus percentage per customer", delivery: "A", only: "ECC", fields: []fieldSpec{k("MANDT"), k("KUNNR"), fd("VALID_FROM", "ERDAT"), f("ZBONUS_PCT")}},
	{name: "ZCUST_RATING", text: "Customer rating (legacy scoring)", delivery: "A", only: "ECC", fields: []fieldSpec{k("MANDT"), k("KUNNR"), f("ZRATING"), fd("RATED_ON", "ERDAT")}},
}

// table is a table definition plus its rows in one system. Rows are keyed by their key
// fields without the client (every row belongs to client 100).
type table struct {
	schema    sap.TableSchema
	authGroup string
	fieldIdx  map[string]int
	keys      []string
	rows      map[string]map[string]string
	virtual   func(*System) []segment // a system table derived on the fly (systables.go); rows stays empty
}

func (t *table) field(name string) (sap.Field, bool) {
	i, ok := t.fieldIdx[name]
	if !ok {
		return sap.Field{}, false
	}
	return t.schema.Fields[i], true
}

func (t *table) keyOf(row map[string]string) string {
	parts := make([]string, len(t.keys))
	for i, k := range t.keys {
		parts[i] = row[k]
	}
	return strings.Join(parts, "\x00")
}

// sortedRows returns the rows in key order (the order RFC_READ_TABLE returns them).
func (t *table) sortedRows() []map[string]string {
	keys := make([]string, 0, len(t.rows))
	for k := range t.rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]map[string]string, len(keys))
	for i, k := range keys {
		out[i] = t.rows[k]
	}
	return out
}

func (t *table) put(row map[string]string) { t.rows[t.keyOf(row)] = row }

func buildTable(spec tableSpec, systemType string, custom bool) *table {
	t := &table{fieldIdx: map[string]int{}, rows: map[string]map[string]string{}, authGroup: spec.authGroup}
	t.schema = sap.TableSchema{Table: spec.name, Description: spec.text, DeliveryClass: spec.delivery, TableClass: "TRANSP", Custom: custom}
	for _, fs := range spec.fields {
		dtel := fs.dtel
		if dtel == "" {
			dtel = fs.name
		}
		de, ok := dataElements[dtel]
		if !ok {
			de = dataElement{domain: "CHAR10", typ: "CHAR", length: 10, text: fs.name}
		}
		length := de.length
		if de.domain == "MATNR" && systemType == "S4HANA" {
			length = 40 // S/4HANA's extended material number
		}
		field := sap.Field{Name: fs.name, Key: fs.key, DataElement: dtel, Domain: de.domain, Type: de.typ, Length: length,
			Decimals: de.decimals, Description: de.text, CheckTable: de.check, Appended: fs.appended}
		if field.CheckTable == spec.name || de.typ == "CLNT" {
			field.CheckTable = "" // a table's own key is not checked against itself; the client is implicit
		}
		t.fieldIdx[fs.name] = len(t.schema.Fields)
		t.schema.Fields = append(t.schema.Fields, field)
		if fs.key && de.typ != "CLNT" {
			t.keys = append(t.keys, fs.name)
		}
	}
	return t
}
