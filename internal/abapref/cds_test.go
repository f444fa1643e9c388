package abapref

import (
	"strings"
	"testing"
)

func TestCDS(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "view entity with joins, associations and comments",
			src: `@AccessControl.authorizationCheck: #CHECK
@EndUserText.label: 'Billing documents' // select from fake_comment
/* association [0..1] to I_NotThere as _x */
define view entity ZI_BillingDoc
  as select from vbrk as h
    inner join vbrp as i on i.vbeln = h.vbeln
    left outer join I_Customer as c on c.Customer = h.kunag
  association [0..1] to I_CompanyCode as _CompanyCode on $projection.bukrs = _CompanyCode.CompanyCode
  association of many to one I_Currency as _Currency on _Currency.Currency = h.waerk
  composition [0..*] of ZI_BillingItem as _Item
{
  key h.vbeln,
      h.bukrs,
      _CompanyCode,
      _Item
}
union all select from zbill_archive as a { key a.vbeln }
`,
			want: []string{"read TABL VBRK 5", "read TABL VBRP 6", "read DDLS I_CUSTOMER 7",
				"association DDLS I_COMPANYCODE 8", "association DDLS I_CURRENCY 9",
				"association DDLS ZI_BILLINGITEM 10", "read TABL ZBILL_ARCHIVE 17"},
		},
		{
			name: "a projection's `: localized` and a path filter's `1:` are no typed elements",
			src: `define view entity ZC_I20_Carrier as projection on ZI_I20_Carrier
{
  key CarrierId,
      _Text[ 1: Language = $session.system_language ].Name as CarrierName : localized,
      _Country._Text[1:LanguageCode = $session.system_language].CountryName as CountryText
}
`,
			want: []string{"read DDLS ZI_I20_CARRIER 1"},
		},
		{
			name: "projection, parent association, extension, table function",
			src: `define root view entity ZC_Travel provider contract transactional_query
  as projection on ZI_Travel
{ key TravelID, _Booking : redirected to composition child ZC_Booking }
define view entity ZI_Booking as select from zbooking
  association to parent ZI_Travel as _Travel on $projection.TravelID = _Travel.TravelID
{ key booking_id }
extend view entity I_SalesDocument with { _Extension.YY1_Prio as YY1_Prio }
define table function ZTF_Stock returns { key matnr : matnr; }
  implemented by method zcl_tf_stock=>read;
`,
			want: []string{"read DDLS ZI_TRAVEL 2", "association DDLS ZC_BOOKING 3", "read TABL ZBOOKING 4", "association DDLS ZI_TRAVEL 5",
				"extend DDLS I_SALESDOCUMENT 7", "type DTEL MATNR 8", "call CLAS ZCL_TF_STOCK 9"},
		},
		{
			name: "parameter types: data elements, not abap.* built-ins, not bindings or annotations",
			src: `@EndUserText.label: 'Open items at a date'
define view entity ZI_OpenItems
  with parameters
    @Environment.systemField: #SYSTEM_DATE
    p_date : abap.dats,
    @Consumption.hidden: true
    p_curr : waers_curr,
    p_bukrs : /dmo/company_code
  as select from I_CurrencyConversion( p_date : $parameters.p_date, p_kind : 'M', p_x : :p_curr ) as c
{
  @Search.fuzzinessThreshold: 0.8
  key c.Currency,
  @UI.lineItem: [{ position: 10, label: 'Rate' }]
  c.Rate
}
`,
			want: []string{"type DTEL WAERS_CURR 7", "type DTEL /DMO/COMPANY_CODE 8", "read DDLS I_CURRENCYCONVERSION 9"},
		},
		{
			name: "typed elements of custom and abstract entities",
			src: `@ObjectModel.query.implementedBy: 'ABAP:ZCL_I20_QUERY'
define custom entity ZCE_I20_Flight
{
  key carrier_id : /dmo/carrier_id;
  key connection : s_conn_id;
      price      : abap.curr( 16, 2 );
      @Semantics.currencyCode: true
      currency   : waers;
      _Carrier   : association [1] to ZI_I20_Carrier on _Carrier.id = $projection.carrier_id;
}
define abstract entity ZAE_I20_Reject
{
  reason : zd_i20_reason;
  note   : abap.string( 0 );
}
`,
			want: []string{"type DTEL /DMO/CARRIER_ID 4", "type DTEL S_CONN_ID 5", "type DTEL WAERS 8",
				"association DDLS ZI_I20_CARRIER 9", "type DTEL ZD_I20_REASON 13"},
		},
		{
			name: "access control protects its entity",
			src: `@EndUserText.label: 'Auth for sales orders'
define role ZI_SALESORDER_DCL {
  grant select on ZI_SalesOrder
    where ( SalesOrganization ) = aspect pfcg_auth( V_VBAK_VKO, VKORG, ACTVT = '03' );
}
`,
			want: []string{"read DDLS ZI_SALESORDER 3"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := refStrings(CDS(tc.src))
			if !sameSet(got, tc.want) {
				t.Errorf("refs\n got: %s\nwant: %s", strings.Join(got, ", "), strings.Join(tc.want, ", "))
			}
		})
	}
}
