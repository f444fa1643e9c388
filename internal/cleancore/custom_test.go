package cleancore

import "testing"

// A repository's own objects are custom whatever their namespace: its /NS/ namespaces and
// its names without a namespace; SAP's namespaces stay SAP's.
func TestWithCustomObjectsMakesTheRepositoryCustom(t *testing.T) {
	base := classifier(t, "/ACME/")
	c := base.WithCustomObjects([]string{"/DMO0/R_TRAVEL", "/dmo0/bp_r_travel", "ACME_REPORT", "ZCL_X", "/ACME/Y"})
	for name, want := range map[string]bool{
		"/DMO0/R_TRAVEL": true, "/DMO0/CX_NOT_LOADED": true, "/dmo0/i_travel": true, // the namespace, loaded or not
		"ACME_REPORT": true, "acme_report": true, "ACME_OTHER": false, // a name without namespace: itself only
		"/ACME/Z": true, "ZANY": true, // configured and Z* stay custom
		"/BOBF/IF_FRW_ACTION": false, "/DMO/FLIGHT": false, "CL_ABAP_CONTEXT_INFO": false,
	} {
		if got := c.IsCustom(name); got != want {
			t.Errorf("IsCustom(%q) = %v, want %v", name, got, want)
		}
	}
	if base.IsCustom("/DMO0/R_TRAVEL") {
		t.Error("the classifier it was made from is unchanged")
	}
	r := c.Classify([]Usage{{"CLAS", "/DMO0/CX_TRAVEL_ERROR", KindType}, {"DDLS", "/DMO0/R_TRAVEL", KindRead}, {"TABL", "/DMO0/TRAVEL_A", KindWrite}})
	if r.Level != LevelA || r.Custom != 3 {
		t.Errorf("an object using only its own repository: level %v, %d custom usages; want A, 3", r.Level, r.Custom)
	}
	if got := Namespace("/DMO0/R_TRAVEL"); got != "/DMO0/" {
		t.Errorf("Namespace = %q", got)
	}
}
