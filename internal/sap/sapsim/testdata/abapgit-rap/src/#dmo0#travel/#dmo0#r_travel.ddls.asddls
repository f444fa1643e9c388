@AccessControl.authorizationCheck: #NOT_REQUIRED
@EndUserText.label: 'Travel'
define root view entity /DMO0/R_TRAVEL
  as select from /dmo0/travel_a
{
  key travel_uuid           as TravelUUID,
      travel_id             as TravelID,
      description           as Description,
      is_active             as IsActive,
      currency_code         as CurrencyCode,
      created_at            as CreatedAt,
      local_last_changed_at as LocalLastChangedAt
}
