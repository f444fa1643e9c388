package sapbackend

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

func TestWriteTableThroughTheABAPPackage(t *testing.T) {
	h := startODataSim(t, "ECC", "")
	var bonus, cust sap.ReadTableResponse
	require.NoError(t, h.call(t, "", "", sap.EndpointReadTable, sap.ReadTableRequest{Table: "ZSALES_BONUS", Fields: []string{"KUNNR"}, RowCount: 1}, &bonus))
	require.NoError(t, h.call(t, "", "", sap.EndpointReadTable, sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR"}, RowCount: 1}, &cust))
	old, fresh := bonus.Rows[0][0], cust.Rows[0][0]
	require.NotEqual(t, old, fresh)
	rows := []map[string]string{
		{"kunnr": old, "ZBONUS_PCT": "7.50"},                             // existing: updated
		{"KUNNR": fresh, "VALID_FROM": "20300101", "ZBONUS_PCT": "1.25"}, // new: inserted
		{"KUNNR": old, "VALID_FROM": "20301332"},                         // no such date
		{"KUNNR": old, "NO_SUCH_FIELD": "x"},                             // unknown field
		{"KUNNR": "", "VALID_FROM": "20300303"},                          // empty key
		{"KUNNR": fresh, "ZBONUS_PCT": "9.99"},                           // key twice
	}
	for _, test := range []bool{true, false} {
		var res sap.WriteTableResponse
		require.NoError(t, h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "zsales_bonus", Mode: "modify", Rows: rows, TestRun: test}, &res))
		assert.Equal(t, 1, res.Inserted)
		assert.Equal(t, 1, res.Updated)
		require.Len(t, res.Errors, 4, "%+v", res.Errors)
		assert.Equal(t, 3, res.Errors[0].Row)
		assert.Equal(t, "VALID_FROM", res.Errors[0].Field)
		assert.Equal(t, 6, res.Errors[3].Row)
		require.Len(t, res.Return, 1)
		var got sap.ReadTableResponse
		require.NoError(t, h.call(t, "", "", sap.EndpointReadTable, sap.ReadTableRequest{Table: "ZSALES_BONUS", Fields: []string{"ZBONUS_PCT"}, Options: []string{"KUNNR = '" + fresh + "'"}}, &got))
		if test {
			assert.Contains(t, res.Return[0].Message, "Test run")
			assert.Empty(t, got.Rows, "a test run saves nothing")
			continue
		}
		assert.Equal(t, "S", res.Return[0].Type)
		require.Len(t, got.Rows, 1)
		assert.Equal(t, "1.25", got.Rows[0][0])
	}
	// insert refuses an existing key.
	var res sap.WriteTableResponse
	require.NoError(t, h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "ZSALES_BONUS", Mode: "insert", Rows: rows[:1]}, &res))
	assert.Equal(t, 0, res.Inserted)
	require.Len(t, res.Errors, 1)
}

func TestWriteTableRefusals(t *testing.T) {
	h := startODataSim(t, "ECC", "")
	rows := []map[string]string{{"KUNNR": "0000000001", "NAME1": "X"}}
	err := h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "KNA1", Mode: "modify", Rows: rows}, &sap.WriteTableResponse{})
	se := protoCode(t, err)
	assert.Equal(t, sap.ErrAuthorization, se.Code, "a standard table outside the allowlist")
	assert.Contains(t, se.Message, "ZSAPAGENT_WTALW")
	err = h.call(t, "RESTRICTED", sapsim.DefaultUsers()["RESTRICTED"], sap.EndpointWriteTable,
		sap.WriteTableRequest{Table: "ZSALES_BONUS", Mode: "insert", Rows: []map[string]string{{"KUNNR": "1", "VALID_FROM": "20300101"}}}, &sap.WriteTableResponse{})
	assert.Equal(t, sap.ErrAuthorization, protoCode(t, err).Code)
	err = h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "ZSALES_BONUS", Mode: "upsert", Rows: rows}, &sap.WriteTableResponse{})
	assert.Equal(t, http.StatusBadRequest, protoCode(t, err).Status)

	none := startSimWith(t, sapsim.Options{NoWritePackage: true}, "ECC", "")
	err = none.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "ZSALES_BONUS", Mode: "modify", Rows: rows}, &sap.WriteTableResponse{})
	se = protoCode(t, err)
	assert.Equal(t, sap.ErrNotSupported, se.Code)
	assert.Equal(t, http.StatusUnprocessableEntity, se.Status)
	assert.Contains(t, se.Message, "install the abapGit package")
}
