package sap

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A read-looking name is no evidence: only listed function modules count as reads, in any case.
func TestRFCWritesCountsUnlistedFunctionModulesAsWrites(t *testing.T) {
	assert.True(t, RFCWrites("BAPI_MATERIAL_GETINTNUMBER"))
	assert.True(t, RFCWrites("Z_UNKNOWN_FM"))
	assert.False(t, RFCWrites("bapi_material_get_detail"))
	assert.False(t, RFCWrites("RFC_READ_TABLE"))
}
