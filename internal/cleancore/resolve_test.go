package cleancore

import "testing"

// TestReasonResolvesTheType covers references whose type the source could
// not tell (issue 20): a bare TYPE that is a released CDS view, an
// association target typed as a view that is a table, an interface without an
// IF_ prefix taken for a class, type-group types like abap_bool and the sy-
// fields (structure SYST). Each must find the repository entry (or the
// built-in rule) and grade as the object really is.
func TestReasonResolvesTheType(t *testing.T) {
	c := classifier(t)
	for _, tc := range []struct {
		name     string
		u        Usage
		level    Level
		resolved string // the TADIR type the reason reports
	}{
		{"released CDS view as a bare TYPE", Usage{"TYPE", "I_CURRENCY", KindType}, LevelA, "DDLS"},
		{"released CDS view taken for a table", Usage{"TABL", "I_CURRENCY", KindRead}, LevelA, "DDLS"},
		{"table taken for a CDS view (association target)", Usage{"DDLS", "T001", KindRead}, LevelC, "TABL"},
		{"interface without IF_ prefix taken for a class", Usage{"CLAS", "IF_OO_ADT_CLASSRUN", KindType}, LevelA, "INTF"},
		{"released data element as a bare TYPE", Usage{"TYPE", "ABAP_BOOLEAN", KindType}, LevelA, "DTEL"},
		{"type-group type abap_bool", Usage{"TYPE", "ABAP_BOOL", KindType}, LevelA, "TYPE"},
		{"type-group type abap_bool as DTEL", Usage{"DTEL", "abap_bool", KindType}, LevelA, "TYPE"},
		{"sy- fields", Usage{"TABL", "SYST", KindType}, LevelA, "TABL"},
		{"unknown stays SAP-internal", Usage{"TYPE", "TVARVC_NOT_THERE", KindType}, LevelC, "TYPE"},
		{"a write stays D whatever the type", Usage{"DDLS", "T001", KindWrite}, LevelD, "TABL"},
	} {
		r, ok := c.Reason(tc.u)
		if !ok {
			t.Fatalf("%s: not an SAP usage", tc.name)
		}
		if r.Level != tc.level || r.Usage.Type != tc.resolved {
			t.Errorf("%s: level %v as %s, want %v as %s (%s)", tc.name, r.Level, r.Usage.Type, tc.level, tc.resolved, r.Why)
		}
	}
}
