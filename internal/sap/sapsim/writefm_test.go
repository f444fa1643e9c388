package sapsim

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// TestWriteTableFMMatchesTheABAPPackage: the simulator's Z_SAPAGENT_WRITE_TABLE has the
// interface the shipped ABAP declares, parameter by parameter.
func TestWriteTableFMMatchesTheABAPPackage(t *testing.T) {
	raw, err := os.ReadFile("../../../abap/zsapagent/src/zsapagent_write.fugr.xml")
	require.NoError(t, err)
	var fg fugrXML
	require.NoError(t, xml.Unmarshal(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")), &fg))
	require.Len(t, fg.Functions, 1)
	assert.Empty(t, fg.Functions[0].Changing)
	assert.Empty(t, fg.Functions[0].Except)
	f := fg.Functions[0]
	text := map[string]string{}
	for _, d := range f.Docs {
		text[d.Parameter] = d.Text
	}
	var want []sap.Parameter
	for _, i := range f.Import {
		want = append(want, sap.Parameter{Name: i.Name, Kind: "import", Type: i.Typ, Default: i.Default, Optional: i.Optional == "X", Description: text[i.Name]})
	}
	for _, e := range f.Export {
		want = append(want, sap.Parameter{Name: e.Name, Kind: "export", Type: e.Typ, Description: text[e.Name]})
	}
	for _, tb := range f.Tables {
		want = append(want, sap.Parameter{Name: tb.Name, Kind: "tables", Type: tb.DBStruct, Optional: tb.Optional == "X", Description: text[tb.Name]})
	}
	s, _ := NewLandscape(Options{}).System("ECC")
	s.init()
	got, err := s.functionInterface(WriteTableFM)
	require.NoError(t, err)
	assert.Equal(t, f.Name, got.Function)
	assert.Equal(t, f.Remote == "R", got.RemoteEnabled)
	assert.Equal(t, f.Text, got.Description)
	assert.Equal(t, want, got.Parameters)

	s2, _ := NewLandscape(Options{NoWritePackage: true}).System("ECC")
	s2.init()
	_, err = s2.functionInterface(WriteTableFM)
	assert.Error(t, err, "without the package the module does not exist")
}

// Over SOAP RFC, RFC_GET_FUNCTION_INTERFACE answers the module's parameters with their defaults.
func TestWriteTableFMInterfaceOverSOAP(t *testing.T) {
	_, c, _ := soapSim(t)
	res, err := c.Call(context.Background(), developer, "RFC_GET_FUNCTION_INTERFACE",
		soaprfc.Params{Imports: map[string]any{"FUNCNAME": WriteTableFM}, Tables: map[string][]soaprfc.Struct{"PARAMS": nil}})
	require.NoError(t, err)
	defaults := map[string]string{}
	for _, p := range res.Table("PARAMS") {
		defaults[p["PARAMETER"]] = p["DEFAULT"]
	}
	assert.Equal(t, map[string]string{"IV_TABNAME": "", "IV_MODE": "'M'", "IV_TESTRUN": "SPACE", "EV_INSERTED": "", "EV_UPDATED": "",
		"IT_VALUES": "", "ET_ERRORS": "", "RETURN": ""}, defaults)
}
