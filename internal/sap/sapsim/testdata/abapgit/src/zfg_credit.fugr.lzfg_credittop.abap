FUNCTION-POOL zfg_credit MESSAGE-ID zcr.
TABLES kna1.
DATA gt_exposure TYPE STANDARD TABLE OF zcredit_exposure.
