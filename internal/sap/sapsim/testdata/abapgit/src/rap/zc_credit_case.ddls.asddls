@EndUserText.label: 'Credit case (projection)'
@AccessControl.authorizationCheck: #CHECK
@Metadata.allowExtensions: true
define root view entity ZC_CREDIT_CASE
  provider contract transactional_query
  as projection on ZI_CREDIT_CASE
{
  key Customer,
      CaseId,
      RiskClass,
      Exposure,
      Currency,
      _Customer
}
