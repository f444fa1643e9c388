package sapsim

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The landscape's data is generated from a fixed seed: every simulator (tests, the dev stack,
// `sapagent-sapsim`) serves the same rows.
const dataSeed = 20261122

type country struct {
	code, name, currency, lang, bukrs string
	cities                            []string
	postal                            func(r *rand.Rand) string
}

func digits(n int) func(r *rand.Rand) string {
	return func(r *rand.Rand) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		return b.String()
	}
}

var countries = []country{
	{"DE", "Germany", "EUR", "D", "1000", []string{"Hamburg", "Berlin", "Munich", "Cologne", "Frankfurt", "Stuttgart", "Walldorf", "Leipzig"}, digits(5)},
	{"US", "USA", "USD", "E", "2000", []string{"New York", "Chicago", "Houston", "Atlanta", "Seattle", "Denver", "Boston"}, digits(5)},
	{"GB", "United Kingdom", "GBP", "E", "3000", []string{"London", "Manchester", "Leeds", "Bristol", "Glasgow"}, func(r *rand.Rand) string {
		return fmt.Sprintf("%c%c%d %d%c%c", 'A'+r.IntN(26), 'A'+r.IntN(26), 1+r.IntN(9), r.IntN(10), 'A'+r.IntN(26), 'A'+r.IntN(26))
	}},
	{"FR", "France", "EUR", "F", "4000", []string{"Paris", "Lyon", "Marseille", "Toulouse", "Lille"}, digits(5)},
	{"IT", "Italy", "EUR", "I", "1000", []string{"Milan", "Turin", "Rome", "Bologna"}, digits(5)},
	{"ES", "Spain", "EUR", "S", "1000", []string{"Madrid", "Barcelona", "Valencia", "Seville"}, digits(5)},
	{"NL", "Netherlands", "EUR", "N", "1000", []string{"Amsterdam", "Rotterdam", "Utrecht", "Eindhoven"}, digits(4)},
	{"AT", "Austria", "EUR", "D", "1000", []string{"Vienna", "Graz", "Linz", "Salzburg"}, digits(4)},
	{"CH", "Switzerland", "CHF", "D", "1000", []string{"Zurich", "Basel", "Bern", "Geneva"}, digits(4)},
	{"PL", "Poland", "PLN", "E", "1000", []string{"Warsaw", "Krakow", "Wroclaw", "Poznan"}, digits(5)},
	{"CN", "China", "CNY", "E", "2000", []string{"Shanghai", "Shenzhen", "Suzhou"}, digits(6)},
	{"JP", "Japan", "JPY", "E", "2000", []string{"Tokyo", "Osaka", "Nagoya"}, digits(7)},
	{"BR", "Brazil", "BRL", "E", "2000", []string{"Sao Paulo", "Curitiba", "Campinas"}, digits(8)},
	{"IN", "India", "INR", "E", "2000", []string{"Bengaluru", "Pune", "Chennai"}, digits(6)},
}

var (
	companyWords = []string{"Nordic", "Alpine", "Atlas", "Summit", "Pioneer", "Harbor", "Vertex", "Orion", "Falcon", "Meridian", "Beacon", "Cedar",
		"Crescent", "Granite", "Horizon", "Keystone", "Liberty", "Maple", "Northwind", "Pacific", "Quantum", "Redwood", "Sterling", "Trident", "Union", "Vanguard"}
	companyNouns = []string{"Machinery", "Logistics", "Components", "Foods", "Retail", "Pharma", "Automotive", "Electronics", "Textiles", "Chemicals",
		"Construction", "Energy", "Packaging", "Instruments", "Tools", "Systems"}
	legalForms = map[string][]string{"DE": {"GmbH", "AG", "GmbH & Co. KG"}, "AT": {"GmbH"}, "CH": {"AG"}, "US": {"Inc.", "LLC", "Corp."}, "GB": {"Ltd", "plc"},
		"FR": {"SA", "SARL"}, "IT": {"S.p.A.", "S.r.l."}, "ES": {"S.A.", "S.L."}, "NL": {"B.V."}, "PL": {"Sp. z o.o."}, "CN": {"Co., Ltd."}, "JP": {"K.K."}, "BR": {"Ltda."}, "IN": {"Pvt. Ltd."}}
	streets    = []string{"Hauptstrasse", "Industrieweg", "Main Street", "Harbour Road", "Rue de la Paix", "Via Roma", "Calle Mayor", "Park Avenue", "Mill Lane", "Bahnhofstrasse"}
	users      = []string{"JSMITH", "MMUELLER", "ABECKER", "LROSSI", "PDUBOIS", "KTANAKA", "SPATEL", "BATCH_JOB", "MIGRATION"}
	matTypes   = []struct{ typ, text string }{{"FERT", "Finished Product"}, {"HALB", "Semifinished Product"}, {"ROH", "Raw materials"}, {"HAWA", "Trading Goods"}, {"VERP", "Packaging"}, {"DIEN", "Services"}}
	matGroups  = []struct{ code, text string }{{"001", "Metals"}, {"002", "Plastics"}, {"003", "Electronics"}, {"004", "Packaging"}, {"005", "Services"}, {"006", "Chemicals"}, {"007", "Fasteners"}, {"008", "Hydraulics"}}
	units      = []struct{ code, dim string }{{"ST", "AAAADL"}, {"PC", "AAAADL"}, {"EA", "AAAADL"}, {"KG", "MASS"}, {"G", "MASS"}, {"L", "VOLUME"}, {"M", "LENGTH"}, {"H", "TIME"}}
	matNouns   = []struct{ en, de, group, unit string }{{"Hex bolt", "Sechskantschraube", "007", "ST"}, {"Washer", "Unterlegscheibe", "007", "ST"}, {"Steel sheet", "Stahlblech", "001", "KG"}, {"Aluminium profile", "Aluminiumprofil", "001", "M"}, {"Hydraulic pump", "Hydraulikpumpe", "008", "ST"}, {"Control unit", "Steuergeraet", "003", "ST"}, {"Sensor", "Sensor", "003", "ST"}, {"Cable harness", "Kabelbaum", "003", "ST"}, {"Plastic housing", "Kunststoffgehaeuse", "002", "ST"}, {"Gear wheel", "Zahnrad", "001", "ST"}, {"Carton box", "Kartonage", "004", "ST"}, {"Pallet", "Palette", "004", "ST"}, {"Lubricant", "Schmierstoff", "006", "L"}, {"Epoxy resin", "Epoxidharz", "006", "KG"}, {"Installation service", "Montageleistung", "005", "H"}, {"Valve", "Ventil", "008", "ST"}}
	matSpecs   = []string{"M6", "M8", "M10", "M12", "DN25", "DN50", "24V", "230V", "2mm", "5mm", "Type A", "Type B", "XL", "Mini"}
	matFinish  = []struct{ en, de string }{{"zinc plated", "verzinkt"}, {"stainless", "rostfrei"}, {"black", "schwarz"}, {"", ""}, {"heavy duty", "schwer"}, {"", ""}}
	plantsECC  = []struct{ werks, name, land, city, bukrs string }{{"1000", "Hamburg Plant", "DE", "Hamburg", "1000"}, {"1100", "Berlin Plant", "DE", "Berlin", "1000"}, {"2000", "Chicago Plant", "US", "Chicago", "2000"}, {"3000", "Manchester Plant", "GB", "Manchester", "3000"}}
	companies  = []struct{ bukrs, name, city, land, waers, spras string }{{"1000", "Atlas Industries GmbH", "Walldorf", "DE", "EUR", "D"}, {"2000", "Atlas Industries Inc.", "New York", "US", "USD", "E"}, {"3000", "Atlas Industries Ltd", "London", "GB", "GBP", "E"}, {"4000", "Atlas Industries SA", "Paris", "FR", "EUR", "F"}}
	currencies = []struct{ code, text string }{{"EUR", "European Euro"}, {"USD", "United States Dollar"}, {"GBP", "British Pound"}, {"CHF", "Swiss Franc"}, {"JPY", "Japanese Yen"}, {"CNY", "Chinese Renminbi"}, {"PLN", "Polish Zloty"}, {"BRL", "Brazilian Real"}, {"INR", "Indian Rupee"}}
	glAccounts = []struct{ saknr, text string }{{"0000113100", "Bank account 1"}, {"0000140000", "Customer receivables"}, {"0000160000", "Vendor payables"}, {"0000191100", "GR/IR clearing"}, {"0000300000", "Inventory raw materials"}, {"0000400000", "Consumption raw materials"}, {"0000800000", "Sales revenue domestic"}, {"0000800100", "Sales revenue foreign"}, {"0000175000", "Output tax"}, {"0000154000", "Input tax"}, {"0000476000", "Office supplies"}, {"0000417000", "Purchased services"}}
)

func pad(n, width int) string { return fmt.Sprintf("%0*d", width, n) }

func date(r *rand.Rand, fromYear, toYear int) string {
	return fmt.Sprintf("%04d%02d%02d", fromYear+r.IntN(toYear-fromYear+1), 1+r.IntN(12), 1+r.IntN(28))
}

func amount(r *rand.Rand, max int) string {
	return fmt.Sprintf("%d.%02d", r.IntN(max), r.IntN(100))
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func companyName(r *rand.Rand, land string) string {
	forms := legalForms[land]
	if len(forms) == 0 {
		forms = []string{"Ltd"}
	}
	return pick(r, companyWords) + " " + pick(r, companyNouns) + " " + pick(r, forms)
}

// fill generates the rows of one system.
func (s *System) fill() {
	r := rand.New(rand.NewPCG(dataSeed, uint64(len(s.info.SystemID))))
	put := func(tab string, row map[string]string) {
		t := s.tables[tab]
		if t == nil {
			return
		}
		if _, ok := t.fieldIdx["MANDT"]; ok {
			row["MANDT"] = client
		}
		if _, ok := t.fieldIdx["CLIENT"]; ok {
			row["CLIENT"] = client
		}
		if _, ok := t.fieldIdx["RCLNT"]; ok {
			row["RCLNT"] = client
		}
		t.put(row)
	}
	s4 := s.info.SystemType == "S4HANA"

	// Customizing: identical on both systems (a migration target is configured first).
	put("T000", map[string]string{"MTEXT": "Atlas production client", "ORT01": "Walldorf", "WAERS": "EUR"})
	for _, c := range companies {
		put("T001", map[string]string{"BUKRS": c.bukrs, "BUTXT": c.name, "ORT01": c.city, "LAND1": c.land, "WAERS": c.waers, "SPRAS": c.spras, "KTOPL": "INT"})
	}
	for _, p := range plantsECC {
		put("T001W", map[string]string{"WERKS": p.werks, "NAME1": p.name, "BWKEY": p.werks, "LAND1": p.land, "ORT01": p.city})
		put("T001L", map[string]string{"WERKS": p.werks, "LGORT": "0001", "LGOBE": "Main store"})
		put("T001L", map[string]string{"WERKS": p.werks, "LGORT": "0002", "LGOBE": "Finished goods"})
	}
	for _, c := range countries {
		put("T005", map[string]string{"LAND1": c.code, "WAERS": c.currency, "SPRAS": c.lang})
		put("T005T", map[string]string{"SPRAS": "E", "LAND1": c.code, "LANDX": c.name})
	}
	for _, c := range currencies {
		put("TCURC", map[string]string{"WAERS": c.code, "LTEXT": c.text})
	}
	for _, u := range units {
		put("T006", map[string]string{"MSEHI": u.code, "DIMID": u.dim})
	}
	for _, g := range matGroups {
		put("T023", map[string]string{"MATKL": g.code, "WGBEZ": g.text})
	}
	for _, m := range matTypes {
		put("T134", map[string]string{"MTART": m.typ, "LTEXT": m.text})
	}
	put("TVKO", map[string]string{"VKORG": "1000", "WAERS": "EUR", "BUKRS": "1000"})
	put("TVKO", map[string]string{"VKORG": "2000", "WAERS": "USD", "BUKRS": "2000"})
	put("TVTW", map[string]string{"VTWEG": "10", "VTEXT": "Direct sales"})
	put("TVTW", map[string]string{"VTWEG": "20", "VTEXT": "Retail"})
	put("TSPA", map[string]string{"SPART": "00", "VTEXT": "Cross-division"})
	put("TSPA", map[string]string{"SPART": "01", "VTEXT": "Products"})
	for _, a := range glAccounts {
		put("SKA1", map[string]string{"KTOPL": "INT", "SAKNR": a.saknr, "XBILK": "X"})
		put("SKAT", map[string]string{"SPRAS": "E", "KTOPL": "INT", "SAKNR": a.saknr, "TXT50": a.text})
	}

	nMat, nCust, nVend, nOrders := 2000, 1000, 500, 3000
	if s4 {
		// A migration target: master and transaction data are mostly still to come.
		nMat, nCust, nVend, nOrders = 5, 5, 3, 4
	}
	matnrLen := 18
	if s4 {
		matnrLen = 40
	}
	matnr := func(i int) string { return pad(i, matnrLen) }
	custBase, vendBase := 100000, 300000
	if s4 {
		custBase, vendBase = 900000, 950000
	}

	var materials []map[string]string
	for i := 1; i <= nMat; i++ {
		noun := pick(r, matNouns)
		spec, fin := pick(r, matSpecs), pick(r, matFinish)
		mt := matTypes[r.IntN(4)].typ
		if noun.group == "005" {
			mt = "DIEN"
		} else if noun.group == "004" {
			mt = "VERP"
		}
		gross := 0.1 + r.Float64()*50
		row := map[string]string{"MATNR": matnr(i), "ERSDA": date(r, 2012, 2024), "ERNAM": pick(r, users), "LAEDA": date(r, 2024, 2025),
			"MTART": mt, "MBRSH": pick(r, []string{"M", "M", "C", "A"}), "MATKL": noun.group, "MEINS": noun.unit,
			"BRGEW": fmt.Sprintf("%.3f", gross), "NTGEW": fmt.Sprintf("%.3f", gross*0.9), "GEWEI": "KG", "SPART": pick(r, []string{"00", "01"})}
		if !s4 {
			row["ZZ_LEGACY_ID"] = fmt.Sprintf("LEG-%06d", 40000+i*7)
		}
		put("MARA", row)
		materials = append(materials, row)
		en := strings.TrimSpace(noun.en + " " + spec + " " + fin.en)
		de := strings.TrimSpace(noun.de + " " + spec + " " + fin.de)
		put("MAKT", map[string]string{"MATNR": matnr(i), "SPRAS": "E", "MAKTX": en})
		put("MAKT", map[string]string{"MATNR": matnr(i), "SPRAS": "D", "MAKTX": de})
		plants := 1 + r.IntN(2)
		for p := 0; p < plants; p++ {
			pl := plantsECC[(i+p)%len(plantsECC)]
			put("MARC", map[string]string{"MATNR": matnr(i), "WERKS": pl.werks, "DISMM": pick(r, []string{"PD", "VB", "ND"}), "EKGRP": pick(r, []string{"001", "002", "003"})})
			put("MARD", map[string]string{"MATNR": matnr(i), "WERKS": pl.werks, "LGORT": "0001", "LABST": fmt.Sprintf("%d.000", r.IntN(5000))})
			price := amount(r, 900)
			put("MBEW", map[string]string{"MATNR": matnr(i), "BWKEY": pl.werks, "VPRSV": pick(r, []string{"S", "V"}), "VERPR": price, "STPRS": price, "PEINH": "1"})
		}
		if mt == "FERT" || mt == "HAWA" {
			put("MVKE", map[string]string{"MATNR": matnr(i), "VKORG": "1000", "VTWEG": "10"})
		}
	}

	var customers []map[string]string
	for i := 1; i <= nCust; i++ {
		c := countries[r.IntN(len(countries))]
		if r.IntN(3) == 0 {
			c = countries[0] // many German customers: the company is German
		}
		kunnr := pad(custBase+i, 10)
		row := map[string]string{"KUNNR": kunnr, "LAND1": c.code, "NAME1": companyName(r, c.code), "ORT01": pick(r, c.cities), "PSTLZ": c.postal(r),
			"STRAS": fmt.Sprintf("%s %d", pick(r, streets), 1+r.IntN(200)), "TELF1": fmt.Sprintf("+%d %d", 10+r.IntN(80), 1000000+r.IntN(8999999)),
			"KTOKD": pick(r, []string{"0001", "0001", "0002"}), "ERDAT": date(r, 2010, 2024), "ERNAM": pick(r, users), "STCEG": c.code + digits(9)(r)}
		if !s4 {
			row["ZZ_LOYALTY_TIER"] = pick(r, []string{"GOLD", "SILVER", "BRONZE", "", ""})
		}
		put("KNA1", row)
		customers = append(customers, row)
		put("KNB1", map[string]string{"KUNNR": kunnr, "BUKRS": c.bukrs, "AKONT": "0000140000", "ZTERM": pick(r, []string{"0001", "ZB30", "ZB60"})})
		vkorg := "1000"
		if c.bukrs == "2000" {
			vkorg = "2000"
		}
		put("KNVV", map[string]string{"KUNNR": kunnr, "VKORG": vkorg, "VTWEG": "10", "SPART": "00", "KDGRP": pick(r, []string{"01", "02", "03"}), "WAERS": c.currency, "ZTERM": "0001"})
		if s4 {
			put("BUT000", map[string]string{"PARTNER": kunnr, "BU_TYPE": "2", "NAME_ORG1": row["NAME1"]})
			put("BUT020", map[string]string{"PARTNER": kunnr, "ADDRNUMBER": pad(5000+i, 10)})
		}
		if i <= 200 {
			put("ADRC", map[string]string{"ADDRNUMBER": pad(5000+i, 10), "DATE_FROM": "00010101", "STREET": row["STRAS"], "CITY1": row["ORT01"], "POST_CODE1": row["PSTLZ"], "COUNTRY": c.code})
		}
		if !s4 && i%3 == 0 {
			put("ZSALES_BONUS", map[string]string{"KUNNR": kunnr, "VALID_FROM": date(r, 2022, 2025), "ZBONUS_PCT": fmt.Sprintf("%d.%02d", r.IntN(8), r.IntN(100))})
		}
		if !s4 && i%5 != 0 {
			put("ZCUST_RATING", map[string]string{"KUNNR": kunnr, "ZRATING": pick(r, []string{"A", "B", "C", "D"}), "RATED_ON": date(r, 2020, 2025)})
		}
	}

	for i := 1; i <= nVend; i++ {
		c := countries[r.IntN(len(countries))]
		lifnr := pad(vendBase+i, 10)
		put("LFA1", map[string]string{"LIFNR": lifnr, "LAND1": c.code, "NAME1": companyName(r, c.code), "ORT01": pick(r, c.cities), "PSTLZ": c.postal(r),
			"STRAS": fmt.Sprintf("%s %d", pick(r, streets), 1+r.IntN(200)), "KTOKK": "LIEF", "ERDAT": date(r, 2008, 2024), "STCEG": c.code + digits(9)(r)})
		put("LFB1", map[string]string{"LIFNR": lifnr, "BUKRS": c.bukrs, "AKONT": "0000160000", "ZTERM": "ZB30"})
		put("LFM1", map[string]string{"LIFNR": lifnr, "EKORG": "1000", "WAERS": c.currency, "ZTERM": "ZB30"})
	}

	// Sales: orders, schedule lines, deliveries and invoices for part of them.
	for i := 1; i <= nOrders; i++ {
		cust := customers[r.IntN(len(customers))]
		vbeln := pad(10000+i, 10)
		erdat := date(r, 2023, 2025)
		items := 1 + r.IntN(5)
		total := 0.0
		var lines []map[string]string
		for it := 1; it <= items; it++ {
			m := materials[r.IntN(len(materials))]
			qty := 1 + r.IntN(100)
			price := 1 + r.Float64()*400
			net := float64(qty) * price
			total += net
			posnr := pad(it*10, 6)
			line := map[string]string{"VBELN": vbeln, "POSNR": posnr, "MATNR": m["MATNR"], "KWMENG": fmt.Sprintf("%d.000", qty), "VRKME": m["MEINS"],
				"NETWR": fmt.Sprintf("%.2f", net), "WAERK": "EUR", "WERKS": plantsECC[r.IntN(2)].werks}
			put("VBAP", line)
			lines = append(lines, line)
			put("VBEP", map[string]string{"VBELN": vbeln, "POSNR": posnr, "ETENR": "0001", "EDATU": erdat, "WMENG": line["KWMENG"]})
		}
		put("VBAK", map[string]string{"VBELN": vbeln, "ERDAT": erdat, "ERNAM": pick(r, users), "AUART": pick(r, []string{"OR", "OR", "OR", "RE", "ZOR"}),
			"VKORG": "1000", "VTWEG": "10", "SPART": "00", "KUNNR": cust["KUNNR"], "NETWR": fmt.Sprintf("%.2f", total), "WAERK": "EUR"})
		if i%2 == 0 {
			dl := pad(80000000+i, 10)
			put("LIKP", map[string]string{"VBELN": dl, "ERDAT": erdat, "KUNNR": cust["KUNNR"], "VSTEL": "1000"})
			for _, l := range lines {
				put("LIPS", map[string]string{"VBELN": dl, "POSNR": l["POSNR"], "MATNR": l["MATNR"], "LFIMG": l["KWMENG"], "WERKS": l["WERKS"]})
			}
		}
		if i%3 == 0 {
			inv := pad(90000000+i, 10)
			put("VBRK", map[string]string{"VBELN": inv, "FKDAT": erdat, "KUNAG": cust["KUNNR"], "NETWR": fmt.Sprintf("%.2f", total), "WAERK": "EUR", "BUKRS": "1000"})
			for _, l := range lines {
				put("VBRP", map[string]string{"VBELN": inv, "POSNR": l["POSNR"], "MATNR": l["MATNR"], "FKIMG": l["KWMENG"], "NETWR": l["NETWR"]})
			}
		}
	}

	// Finance: documents with three lines each (receivable, revenue, tax).
	nDocs := 2000
	if s4 {
		nDocs = 20
	}
	for i := 1; i <= nDocs; i++ {
		co := companies[r.IntN(len(companies))]
		belnr := pad(100000000+i, 10)
		budat := date(r, 2024, 2025)
		put("BKPF", map[string]string{"BUKRS": co.bukrs, "BELNR": belnr, "GJAHR": budat[:4], "BLART": pick(r, []string{"DR", "KR", "SA", "RV"}),
			"BUDAT": budat, "BLDAT": budat, "BKTXT": pick(r, []string{"Invoice", "Payment", "Accrual", "Reclass"}), "WAERS": co.waers})
		net := 100 + r.Float64()*9000
		cust := customers[r.IntN(len(customers))]
		lines := []struct{ shkzg, hkont, amount string }{
			{"S", "0000140000", fmt.Sprintf("%.2f", net*1.19)}, {"H", "0000800000", fmt.Sprintf("%.2f", net)}, {"H", "0000175000", fmt.Sprintf("%.2f", net*0.19)}}
		for j, l := range lines {
			row := map[string]string{"BUKRS": co.bukrs, "BELNR": belnr, "GJAHR": budat[:4], "BUZEI": pad(j+1, 3), "SHKZG": l.shkzg, "DMBTR": l.amount, "HKONT": l.hkont}
			if j == 0 {
				row["KUNNR"] = cust["KUNNR"]
			}
			put("BSEG", row)
			if s4 {
				put("ACDOCA", map[string]string{"RLDNR": "0L", "RBUKRS": co.bukrs, "GJAHR": budat[:4], "BELNR": belnr, "DOCLN": pad(j+1, 6),
					"RACCT": l.hkont, "HSL": l.amount, "RHCUR": co.waers, "BUDAT": budat})
			}
		}
	}
	for i := 1; i <= 40; i++ {
		co := companies[i%len(companies)]
		put("CSKS", map[string]string{"KOKRS": "A000", "KOSTL": pad(4100+i*10, 10), "DATBI": "99991231", "BUKRS": co.bukrs, "VERAK": pick(r, users)})
	}

	// Purchasing and inventory.
	nPO := 1000
	if s4 {
		nPO = 3
	}
	for i := 1; i <= nPO; i++ {
		ebeln := pad(4500000000+i, 10)
		vend := pad(vendBase+1+r.IntN(nVend), 10)
		put("EKKO", map[string]string{"EBELN": ebeln, "BUKRS": "1000", "BSART": "NB", "LIFNR": vend, "EKORG": "1000", "EKGRP": pick(r, []string{"001", "002"}),
			"BEDAT": date(r, 2024, 2025), "WAERS": "EUR"})
		for it := 1; it <= 1+r.IntN(5); it++ {
			m := materials[r.IntN(len(materials))]
			put("EKPO", map[string]string{"EBELN": ebeln, "EBELP": pad(it*10, 5), "MATNR": m["MATNR"], "WERKS": "1000", "MENGE": fmt.Sprintf("%d.000", 1+r.IntN(500)),
				"MEINS": m["MEINS"], "NETPR": amount(r, 300)})
		}
	}
	for i := 1; i <= nPO/3; i++ {
		m := materials[r.IntN(len(materials))]
		put("EBAN", map[string]string{"BANFN": pad(10000000+i, 10), "BNFPO": "00010", "MATNR": m["MATNR"], "WERKS": "1000", "MENGE": fmt.Sprintf("%d.000", 1+r.IntN(100)), "EKGRP": "001"})
	}
	nMov := 500
	if s4 {
		nMov = 10
	}
	for i := 1; i <= nMov; i++ {
		mblnr := pad(4900000000+i, 10)
		budat := date(r, 2024, 2025)
		put("MKPF", map[string]string{"MBLNR": mblnr, "MJAHR": budat[:4], "BUDAT": budat, "USNAM": pick(r, users)})
		for z := 1; z <= 2; z++ {
			m := materials[r.IntN(len(materials))]
			row := map[string]string{"MBLNR": mblnr, "MJAHR": budat[:4], "ZEILE": pad(z, 4), "BWART": pick(r, []string{"101", "201", "261", "601"}), "MATNR": m["MATNR"],
				"WERKS": "1000", "LGORT": "0001", "MENGE": fmt.Sprintf("%d.000", 1+r.IntN(50))}
			put("MSEG", row)
			row2 := map[string]string{"BUDAT": budat}
			for k, v := range row {
				row2[k] = v
			}
			put("MATDOC", row2)
		}
	}
}
