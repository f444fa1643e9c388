@AccessControl.authorizationCheck: #CHECK
@EndUserText.label: 'Credit case'
define root view entity ZI_CREDIT_CASE
  as select from zcredit_exposure as Exposure
  association [0..1] to I_Customer as _Customer on $projection.Customer = _Customer.Customer
{
  key Exposure.kunnr      as Customer,
      Exposure.case_id    as CaseId,
      Exposure.risk_class as RiskClass,
      @Semantics.amount.currencyCode: 'Currency'
      Exposure.exposure   as Exposure,
      Exposure.currency   as Currency,
      _Customer
}
