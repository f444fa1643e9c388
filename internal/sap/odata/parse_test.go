package odata

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseMetadataBusinessPartner(t *testing.T) {
	s, err := ParseMetadata(readTestdata(t, "api_business_partner_metadata.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Namespace != "API_BUSINESS_PARTNER" || len(s.EntityTypes) != 36 {
		t.Fatalf("namespace %q, %d types", s.Namespace, len(s.EntityTypes))
	}
	bp := s.EntitySets["A_BusinessPartner"]
	if bp == nil || bp.EntityType.Name != "API_BUSINESS_PARTNER.A_BusinessPartnerType" {
		t.Fatalf("A_BusinessPartner: %+v", bp)
	}
	if !bp.Creatable || !bp.Updatable || bp.Deletable {
		t.Errorf("A_BusinessPartner flags: %+v (recorded sap:deletable=false)", bp)
	}
	if len(bp.EntityType.Key) != 1 || bp.EntityType.Key[0] != "BusinessPartner" {
		t.Errorf("key %v", bp.EntityType.Key)
	}
	p, ok := bp.EntityType.Property("BusinessPartner")
	if !ok || p.Type != "Edm.String" || p.MaxLength != 10 || p.Nullable {
		t.Errorf("BusinessPartner property %+v", p)
	}
	c, _ := bp.EntityType.Property("Customer")
	if c.Creatable || c.Updatable || !c.Nullable {
		t.Errorf("Customer is sap:creatable/updatable=false in the recording: %+v", c)
	}
}

func TestParseMetadataSalesOrder(t *testing.T) {
	s, err := ParseMetadata(readTestdata(t, "api_sales_order_srv_metadata.xml"))
	if err != nil {
		t.Fatal(err)
	}
	so := s.EntitySets["A_SalesOrder"]
	if so == nil || len(so.EntityType.Key) != 1 || so.EntityType.Key[0] != "SalesOrder" {
		t.Fatalf("A_SalesOrder: %+v", so)
	}
	p, ok := so.EntityType.Property("TotalNetAmount")
	if !ok || p.Type != "Edm.Decimal" || p.Precision == 0 {
		t.Errorf("TotalNetAmount %+v", p)
	}
}

func TestValidateWrite(t *testing.T) {
	s, err := ParseMetadata(readTestdata(t, "api_business_partner_metadata.xml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, kind, field string
		entity            map[string]any
	}{
		{"too long", WriteCreate, "BusinessPartner", map[string]any{"BusinessPartner": "12345678901"}},
		{"unknown field", WriteUpdate, "NoSuchField", map[string]any{"NoSuchField": "x"}},
		{"not creatable", WriteCreate, "Customer", map[string]any{"BusinessPartner": "1", "Customer": "C1"}},
		{"wrong type", WriteUpdate, "IsMarkedForArchiving", map[string]any{"IsMarkedForArchiving": "yes"}},
		{"null in a non-nullable field", WriteCreate, "BusinessPartner", map[string]any{"BusinessPartner": nil}},
	}
	for _, c := range cases {
		err := s.ValidateWrite("A_BusinessPartner", c.kind, c.entity)
		var oe *Error
		if !errors.As(err, &oe) || oe.Kind != ErrBadInput || oe.Field != c.field {
			t.Errorf("%s: %v, want bad input on %s", c.name, err, c.field)
			continue
		}
		if pe := oe.Protocol(); pe.Code != sap.ErrBadRequest || pe.Status != 400 {
			t.Errorf("%s: protocol %+v", c.name, pe)
		}
	}
	if err := s.ValidateWrite("A_BusinessPartner", WriteCreate, map[string]any{"BusinessPartner": "4711", "BusinessPartnerCategory": "1"}); err != nil {
		t.Errorf("valid create: %v", err)
	}
	// SAP numbers a new business partner itself: the key may be left out on create.
	if err := s.ValidateWrite("A_BusinessPartner", WriteCreate, map[string]any{"BusinessPartnerCategory": "2", "OrganizationBPName1": "ACME"}); err != nil {
		t.Errorf("create without key: %v", err)
	}
	if err := s.ValidateWrite("A_NoSet", WriteCreate, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown set: %v", err)
	}
}

func TestParseEntitySetRecorded(t *testing.T) {
	p, err := ParseEntitySet(readTestdata(t, "gwsample_salesorderset_4.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entities) != 4 || p.Next != "" {
		t.Fatalf("%d entities, next %q", len(p.Entities), p.Next)
	}
	if got := p.Entities[0].Properties["SalesOrderID"]; got != "111" {
		t.Errorf("first SalesOrderID %v", got)
	}
	if got := p.Entities[3].Properties["GrossAmount"]; got != "4174.16" {
		t.Errorf("last GrossAmount %v", got)
	}
}

func TestParseGatewayErrorJSON(t *testing.T) {
	e := ParseGatewayError(400, readTestdata(t, "error_gwsample_mandatory_field.json"))
	if e.Kind != ErrBadInput || e.Code != "SEPM_BO_COMMON/010" || e.Message != "Mandatory field 'PRODUCT_GUID' is empty" || len(e.Details) != 2 {
		t.Fatalf("%+v", e)
	}
	pe := e.Protocol()
	if pe.Status != 400 || pe.Code != sap.ErrBadRequest || pe.Exception != "SEPM_BO_COMMON/010" {
		t.Errorf("protocol %+v", pe)
	}
}

func TestParseGatewayErrorXML(t *testing.T) {
	e := ParseGatewayError(400, readTestdata(t, "error_sap_help_team_xml.xml"))
	if e.Code != "/IWBEP/CM_TEA/004" || e.Message != "'TEAM_012345678' is not in the defined range." || len(e.Details) != 3 {
		t.Fatalf("%+v", e)
	}
	if e.Field != "Team/Team_Identifier" {
		t.Errorf("field %q", e.Field)
	}
	if pe := e.Protocol(); pe.Code != sap.ErrBadRequest || pe.Message != "Team/Team_Identifier: 'TEAM_012345678' is not in the defined range." {
		t.Errorf("protocol %+v", pe)
	}
}

func TestErrorStatusMapping(t *testing.T) {
	cases := map[int]struct {
		code   string
		status int
	}{
		401: {sap.ErrLogonFailed, 401},
		403: {sap.ErrAuthorization, 403},
		404: {sap.ErrNotFound, 404},
		400: {sap.ErrBadRequest, 400},
		412: {sap.ErrSAPException, 409},
		503: {sap.ErrSystemUnavailable, 503},
		500: {sap.ErrSAPException, 422},
	}
	for st, want := range cases {
		pe := ParseGatewayError(st, nil).Protocol()
		if pe.Code != want.code || pe.Status != want.status {
			t.Errorf("%d: %+v, want %s/%d", st, pe, want.code, want.status)
		}
	}
	if pe := ParseGatewayError(412, nil).Protocol(); pe.Exception != "PRECONDITION_FAILED" {
		t.Errorf("412 exception %q", pe.Exception)
	}
}

func TestParseBatchResponseRecorded(t *testing.T) {
	body := readTestdata(t, "batch_response_with_error.txt")
	ct := "multipart/mixed; boundary=batchresponse_76ef6b0a-a0e2-4f31-9f70-f5d3f73a6bef"
	for _, crlf := range []bool{false, true} {
		b := body
		if crlf {
			b = bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
		}
		res, err := ParseBatchResponse(ct, b)
		if err != nil {
			t.Fatalf("crlf %v: %v", crlf, err)
		}
		if len(res) != 3 {
			t.Fatalf("crlf %v: %d parts", crlf, len(res))
		}
		if res[0].Failed() != nil || res[0].Results[0].Status != 200 {
			t.Errorf("part 1: %+v", res[0])
		}
		page, err := ParseEntitySet(res[0].Results[0].Body)
		if err != nil || len(page.Entities) != 1 || page.Entities[0].Properties["StringValue"] != "Foo" {
			t.Errorf("part 1 body: %v %+v", err, page)
		}
		ent, err := ParseEntity(res[1].Results[0].Body, "")
		if err != nil || ent.Properties["IntegerValue"] != float64(9000) {
			t.Errorf("part 2 body: %v %+v", err, ent)
		}
		f := res[2].Failed()
		if f == nil || f.Status != 400 || f.Code != "ZCU/100" || len(f.Details) != 2 {
			t.Fatalf("part 3: %+v", f)
		}
		if f.Message != "Service 0000000003 0000000010 niet gevonden voor operatie 0410" {
			t.Errorf("part 3 message %q", f.Message)
		}
	}
}
