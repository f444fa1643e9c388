package sap

import "strings"

// knownReads lists, by full name, the function modules known to only read: what runs without
// approval and what a technical user that serves reads may call. A name is no evidence (a
// BAPI_*_GET… may reserve numbers, e.g. BAPI_MATERIAL_GETINTNUMBER), so every function module
// not listed here counts as a write.
var knownReads = map[string]bool{
	// Remote function calls and the ABAP dictionary and repository.
	"RFC_PING": true, "RFC_SYSTEM_INFO": true, "RFC_GET_SYSTEM_INFO": true, "RFC_READ_TABLE": true, "BBP_RFC_READ_TABLE": true,
	"RFC_GET_FUNCTION_INTERFACE": true, "RFC_GET_STRUCTURE_DEFINITION": true, "RFC_GET_NAMETAB": true, "RFC_FUNCTION_SEARCH": true,
	"DDIF_FIELDINFO_GET": true, "DDIF_NAMETAB_GET": true, "DDIF_TABL_GET": true, "DDIF_DTEL_GET": true, "DDIF_DOMA_GET": true,
	"RPY_FUNCTIONMODULE_READ": true, "RPY_PROGRAM_READ": true,
	"CONVERSION_EXIT_ALPHA_INPUT": true, "CONVERSION_EXIT_ALPHA_OUTPUT": true,
	// Users.
	"BAPI_USER_GET_DETAIL": true, "BAPI_USER_GETLIST": true, "BAPI_USER_EXISTENCE_CHECK": true,
	// Finance and controlling.
	"BAPI_COMPANYCODE_GETDETAIL": true, "BAPI_COMPANYCODE_GETLIST": true, "BAPI_COMPANYCODE_EXISTENCECHECK": true,
	"BAPI_COMPANY_GETDETAIL": true, "BAPI_COMPANY_GETLIST": true,
	"BAPI_CONTROLLINGAREA_GETDETAIL": true, "BAPI_CONTROLLINGAREA_GETLIST": true,
	"BAPI_COSTCENTER_GETDETAIL": true, "BAPI_COSTCENTER_GETDETAIL1": true, "BAPI_COSTCENTER_GETLIST": true, "BAPI_COSTCENTER_GETLIST1": true,
	"BAPI_PROFITCENTER_GETDETAIL": true, "BAPI_PROFITCENTER_GETLIST": true,
	"BAPI_GL_ACC_GETDETAIL": true, "BAPI_GL_ACC_GETLIST": true, "BAPI_GL_ACC_EXISTENCECHECK": true,
	// BAPI_ACC_DOCUMENT_CHECK checks a posting without posting it.
	"BAPI_ACC_DOCUMENT_CHECK": true, "BAPI_BANK_GETDETAIL": true, "BAPI_BANK_GETLIST": true,
	"BAPI_CURRENCY_GETLIST": true, "BAPI_CURRENCY_CONV_TO_INTERNAL": true, "BAPI_CURRENCY_CONV_TO_EXTERNAL": true,
	"BAPI_EXCHANGERATE_GETDETAIL": true, "BAPI_INCOMINGINVOICE_GETDETAIL": true, "BAPI_INCOMINGINVOICE_GETLIST": true,
	// Master data.
	"BAPI_MATERIAL_GET_DETAIL": true, "BAPI_MATERIAL_GETLIST": true, "BAPI_MATERIAL_EXISTENCECHECK": true, "BAPI_MATERIAL_GET_ALL": true,
	"BAPI_MATERIAL_AVAILABILITY": true, "BAPI_MATERIAL_STOCK_REQ_LIST": true,
	"BAPI_CUSTOMER_GETDETAIL": true, "BAPI_CUSTOMER_GETDETAIL1": true, "BAPI_CUSTOMER_GETDETAIL2": true, "BAPI_CUSTOMER_GETLIST": true,
	"BAPI_CUSTOMER_EXISTENCECHECK": true, "BAPI_CUSTOMER_GETSALESAREAS": true, "BAPI_CUSTOMER_FIND": true,
	"BAPI_VENDOR_GETDETAIL": true, "BAPI_VENDOR_EXISTENCECHECK": true, "BAPI_VENDOR_FIND": true,
	"BAPI_BUPA_CENTRAL_GETDETAIL": true, "BAPI_BUPA_ADDRESS_GETDETAIL": true, "BAPI_BUPA_EXISTENCE_CHECK": true, "BAPI_BUPA_ROLES_GET": true,
	"BAPI_EMPLOYEE_GETDATA": true,
	// Sales, purchasing, billing and inventory documents.
	"BAPI_SALESORDER_GETLIST": true, "BAPI_SALESORDER_GETSTATUS": true, "BAPISDORDER_GETDETAILEDLIST": true,
	"BAPI_PO_GETDETAIL": true, "BAPI_PO_GETDETAIL1": true, "BAPI_PO_GETITEMS": true, "BAPI_PO_GETITEMSREL": true, "BAPI_PO_GETRELINFO": true,
	"BAPI_PR_GETDETAIL": true, "BAPI_REQUISITION_GETDETAIL": true, "BAPI_REQUISITION_GETITEMS": true,
	"BAPI_BILLINGDOC_GETDETAIL": true, "BAPI_BILLINGDOC_GETLIST": true,
	"BAPI_GOODSMVT_GETDETAIL": true, "BAPI_GOODSMVT_GETITEMS": true,
	"BAPI_HELPVALUES_GET": true,
	// Discards the session's uncommitted work; changes nothing.
	"BAPI_TRANSACTION_ROLLBACK": true,
}

// RFCWrites reports whether calling fn may change data (used by execute_code's approval check,
// the tools' approval policy and the connection resolver's read-only technical user); unknown
// function modules count as writes.
func RFCWrites(fn string) bool {
	return !knownReads[strings.ToUpper(fn)]
}
