FUNCTION-POOL /dmo0/travel_api.            "MESSAGE-ID /dmo0/travel
