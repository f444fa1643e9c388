package sapsim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolveTypeByWhatTheNameIs: a reference typed from source by naming
// rules gets the type of the object the system has under that name (issue 20):
// an association target that is a table, a released CDS view used as a bare
// TYPE, an interface without an IF_ prefix.
func TestResolveTypeByWhatTheNameIs(t *testing.T) {
	s := ecc(t)
	require.NoError(t, s.LoadABAPGit("testdata/abapgit"))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range []struct{ typ, name, want string }{
		{"DDLS", "ZCREDIT_EXPOSURE", "TABL"},   // loaded table as an association target
		{"TABL", "ZI_CREDIT_CASE", "DDLS"},     // loaded CDS view taken for a table
		{"TYPE", "I_CURRENCY", "DDLS"},         // released CDS view as a bare TYPE
		{"TYPE", "ZI_CREDIT_CASE", "DDLS"},     // loaded CDS entity as a bare TYPE
		{"CLAS", "IF_OO_ADT_CLASSRUN", "INTF"}, // interface the repository knows
		{"TABL", "KNA1", "TABL"},               // a table stays a table
		{"DDLS", "ZNOT_THERE", "DDLS"},         // unknown: as the source said
	} {
		assert.Equal(t, c.want, s.resolveType(c.typ, c.name), "%s %s", c.typ, c.name)
	}
}
