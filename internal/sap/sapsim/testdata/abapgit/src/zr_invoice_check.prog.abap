*&---------------------------------------------------------------------*
*& Invoice plausibility check before posting
*&---------------------------------------------------------------------*
REPORT zr_invoice_check.
SELECT vbeln, kunag, netwr FROM vbrk INTO TABLE @DATA(gt_invoices) WHERE fkdat >= '20250101'.
LOOP AT gt_invoices INTO DATA(ls_inv).
  SELECT SINGLE zlimit FROM zcredit_limit INTO @DATA(lv_limit) WHERE kunnr = @ls_inv-kunag.
  IF ls_inv-netwr > lv_limit.
    WRITE: / ls_inv-vbeln, 'over limit'.
  ENDIF.
ENDLOOP.
