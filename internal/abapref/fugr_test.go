package abapref

import (
	"fmt"
	"os"
	"testing"
)

// TestFunctionInterfaces: the types a function module's XML interface names
// are references of the module, whether or not its source repeats them.
func TestFunctionInterfaces(t *testing.T) {
	const x = `<?xml version="1.0" encoding="utf-8"?>
<abapGit version="v1.0.0" serializer="LCL_OBJECT_FUGR" serializer_version="v1.0.0">
 <asx:abap xmlns:asx="http://www.sap.com/abapxml" version="1.0">
  <asx:values>
   <FUNCTIONS>
    <item>
     <FUNCNAME>Z_I20_POST</FUNCNAME>
     <IMPORT>
      <RSIMP><PARAMETER>IV_BUKRS</PARAMETER><TYP>BUKRS</TYP></RSIMP>
      <RSIMP><PARAMETER>IV_TEXT</PARAMETER><TYP>STRING</TYP></RSIMP>
      <RSIMP><PARAMETER>IV_LANGU</PARAMETER><TYP>SY-LANGU</TYP></RSIMP>
      <RSIMP><PARAMETER>IO_LOG</PARAMETER><REFERENCE>X</REFERENCE><TYP>ZIF_I20_LOG</TYP><REF_CLASS>X</REF_CLASS></RSIMP>
      <RSIMP><PARAMETER>IV_WAERS</PARAMETER><DBFIELD>T001-WAERS</DBFIELD></RSIMP>
      <RSIMP><PARAMETER>IS_CFG</PARAMETER><TYP>ZCL_I20_CFG=&gt;TY_CFG</TYP></RSIMP>
     </IMPORT>
     <EXPORT>
      <RSEXP><PARAMETER>ET_ITEMS</PARAMETER><TYP>ZTT_I20_ITEMS</TYP></RSEXP>
      <RSEXP><PARAMETER>EV_ANY</PARAMETER><TYP>ANY</TYP></RSEXP>
     </EXPORT>
     <CHANGING>
      <RSCHA><PARAMETER>CS_HEAD</PARAMETER><TYP>BKPF</TYP></RSCHA>
     </CHANGING>
     <TABLES>
      <RSTBL><PARAMETER>T_RETURN</PARAMETER><DBSTRUCT>BAPIRET2</DBSTRUCT></RSTBL>
      <RSTBL><PARAMETER>T_LINES</PARAMETER><TYP>STANDARD TABLE</TYP></RSTBL>
     </TABLES>
     <EXCEPTION>
      <RSEXC><EXCEPTION>ZCX_I20_POST</EXCEPTION></RSEXC>
     </EXCEPTION>
     <EXCEPTION_CLASSES>X</EXCEPTION_CLASSES>
    </item>
    <item>
     <FUNCNAME>Z_I20_CLASSIC</FUNCNAME>
     <EXCEPTION>
      <RSEXC><EXCEPTION>NOT_FOUND</EXCEPTION></RSEXC>
     </EXCEPTION>
    </item>
   </FUNCTIONS>
  </asx:values>
 </asx:abap>
</abapGit>`
	got, err := FunctionInterfaces(x)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"type TYPE BUKRS 0", "type TYPE SYST 0", "type INTF ZIF_I20_LOG 0", "type TYPE T001 0", "type CLAS ZCL_I20_CFG 0",
		"type TYPE ZTT_I20_ITEMS 0", "type TYPE BKPF 0", "type TYPE BAPIRET2 0", "type CLAS ZCX_I20_POST 0"}
	if g := refStrings(got["Z_I20_POST"]); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("Z_I20_POST: got %v, want %v", g, want)
	}
	if g := got["Z_I20_CLASSIC"]; len(g) != 0 {
		t.Errorf("Z_I20_CLASSIC: classic exceptions name no object, got %v", refStrings(g))
	}
	if _, err := FunctionInterfaces("<abapGit"); err == nil {
		t.Error("malformed XML: want an error")
	}
}

// TestFunctionInterfacesFixture: Z_CREDIT_CHECK's IV_AMOUNT is typed with
// ZD_CREDIT_AMOUNT only in the group's XML, not in the source's `*"` block.
func TestFunctionInterfacesFixture(t *testing.T) {
	b, err := os.ReadFile("../sap/sapsim/testdata/abapgit/src/zfg_credit.fugr.xml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := FunctionInterfaces(string(b))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"type TYPE KUNNR 0", "type TYPE ZD_CREDIT_AMOUNT 0", "type TYPE ABAP_BOOL 0", "type TYPE BAPIRET2 0"}
	if g := refStrings(got["Z_CREDIT_CHECK"]); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", g, want)
	}
}
