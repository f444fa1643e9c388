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
				"extend DDLS I_SALESDOCUMENT 7", "call CLAS ZCL_TF_STOCK 9"},
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
