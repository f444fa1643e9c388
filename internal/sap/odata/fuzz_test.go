package odata

import (
	"testing"
)

// FuzzParsers feeds the parsers arbitrary bytes: they must return an error, never panic.
func FuzzParsers(f *testing.F) {
	for _, name := range []string{"gwsample_salesorderset_4.json", "error_gwsample_mandatory_field.json", "error_sap_help_team_xml.xml", "batch_response_with_error.txt"} {
		f.Add(readTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseEntitySet(b)
		_, _ = ParseEntity(b, "")
		_ = ParseGatewayError(400, b)
		_, _ = ParseMetadata(b)
		_, _ = ParseBatchResponse("multipart/mixed; boundary=batchresponse_76ef6b0a-a0e2-4f31-9f70-f5d3f73a6bef", b)
	})
}
